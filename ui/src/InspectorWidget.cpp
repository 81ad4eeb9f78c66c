#include "InspectorWidget.h"

#include <passlens/trace/Trace.h>

#include <algorithm>

namespace passlens {

namespace {
QString esc(const std::string& s) { return QString::fromStdString(s).toHtmlEscaped(); }

QString eventLink(const Trace* t, int seq) {
    if (!t || seq <= 0) return QObject::tr("the source graph");
    const RewriteEvent& e = t->events()[static_cast<std::size_t>(seq - 1)];
    return QStringLiteral("<a href=\"event:%1\">#%1 %2</a> (phase %3)").arg(seq).arg(esc(e.rewriter), esc(e.phase));
}
} // namespace

InspectorWidget::InspectorWidget(QWidget* parent)
    : QTextBrowser(parent) {
    setOpenLinks(false);
    connect(this, &QTextBrowser::anchorClicked, this, [this](const QUrl& url) {
        if (url.scheme() == QStringLiteral("event")) emit eventActivated(url.path().toInt());
        if (url.scheme() == QStringLiteral("nested")) {
            const QStringList parts = url.path().split(QLatin1Char('/'));
            if (parts.size() == 2) emit nestedActivated(parts[0].toLongLong(), parts[1]);
        }
    });
    clearNode();
}

void InspectorWidget::clearNode() {
    m_node = -1;
    setHtml(tr("<p><i>Select a node in the graph or the profile table.</i></p>"));
}

void InspectorWidget::showNode(const FunctionGraph* graph, const Trace* trace, NodeId id,
                               const ExecutionProfile* profile) {
    const Apply* n = graph ? graph->node(id) : nullptr;
    if (!n) return clearNode();
    m_node = id;
    QString h;
    h += QStringLiteral("<h3>%1</h3>").arg(esc(n->op().str()));
    // a node kept selected across steps that the step shown no longer has (or has not yet)
    if (!n->inGraph()) h += tr("<p><i>Not in the graph of the step shown.</i></p>");
    h += QStringLiteral("<p>node #%1%2 · kind <b>%3</b> · %4</p>")
             .arg(id)
             .arg(n->name().empty() ? QString() : QStringLiteral(" · ") + esc(n->name()), esc(n->op().kind()),
                  n->op().isGpu()        ? tr("GPU")
                  : n->op().isTransfer() ? tr("transfer")
                                         : tr("host"));
    if (!n->op().attrs().empty())
        h += QStringLiteral("<p><b>Attributes</b><br><code>%1</code></p>").arg(esc(n->op().attrs().dump()));
    if (!n->op().subgraphs().empty()) {
        h += tr("<p><b>Nested graphs</b><br>");
        for (const Subgraph& sg : n->op().subgraphs())
            h += QStringLiteral("<a href=\"nested:%1/%2\">open %2</a> (%3 nodes)<br>")
                     .arg(id)
                     .arg(esc(sg.attribute))
                     .arg(sg.graph->nodeCount());
        h += QStringLiteral("</p>");
    }
    h += tr("<p><b>Inputs</b><br>");
    for (int i = 0; i < n->nin(); ++i)
        h += QStringLiteral("%1. %2 : <code>%3</code><br>")
                 .arg(i)
                 .arg(esc(n->input(i)->displayName()), esc(n->input(i)->type().str()));
    h += tr("</p><p><b>Outputs</b><br>");
    for (int i = 0; i < n->nout(); ++i)
        h += QStringLiteral("%1. %2 : <code>%3</code><br>")
                 .arg(i)
                 .arg(esc(n->output(i)->displayName()), esc(n->output(i)->type().str()));
    h += QStringLiteral("</p>");
    if (trace) {
        const int created = trace->createdBy(id);
        QString by = eventLink(trace, created);
        if (!created && n->tag.value("provenance", std::string()) == "make_node")
            by += tr(", inserted by make_node (Theano's constructor converts its inputs)");
        h += tr("<p><b>Created by</b> %1<br>").arg(by);
        const int removed = trace->removedBy(id);
        h += tr("<b>Removed by</b> %1</p>").arg(removed ? eventLink(trace, removed) : tr("— (in the final graph)"));
        for (const auto& l : trace->lifting())
            if (l.node == id)
                // (a node on the GPU has no other reason than being there: said once)
                h += l.lifted && (l.reason.empty() || l.reason == "on the GPU")
                         ? tr("<p><b>Lifting</b>: on the GPU</p>")
                         : tr("<p><b>Lifting</b>: %1 — %2</p>")
                               .arg(l.lifted ? tr("on the GPU") : tr("left on the host"), esc(l.reason));
        QString tried;
        int count = 0;
        for (const auto& e : trace->events())
            if (e.node == id && e.status != EventStatus::Applied && count++ < 30)
                tried += QStringLiteral("<li>%1 <i>%2</i>: %3</li>")
                             .arg(eventLink(trace, e.seq), esc(statusName(e.status)), esc(e.reason));
        if (!tried.isEmpty()) h += tr("<p><b>Rewrites tried on it</b></p><ul>%1</ul>").arg(tried);
    }
    if (profile) {
        if (const ProfileNode* p = profile->find(id)) {
            QString how = QString::fromLatin1(stepKindName(p->stepKind));
            if (p->fusedInto) how = tr("fused into #%1: its time is in that node's").arg(*p->fusedInto);
            if (p->inPlace) how = tr("in place: its inputs were written into its output");
            h += tr("<p><b>Timing</b>: %1 µs per run (%2)")
                     .arg(p->timeUs ? QString::number(*p->timeUs, 'f', 1) : tr("n/a"), how);
            for (const ProfileTransfer& t : profile->transfers)
                if (t.node == id)
                    h += tr(", %1 bytes %2%3")
                             .arg(t.bytes ? QString::number(static_cast<qulonglong>(*t.bytes)) : QStringLiteral("?"))
                             .arg(QString::fromLatin1(transferDirectionName(t.direction)))
                             .arg(t.implicit ? tr(" (implicit, %1 µs)").arg(t.timeUs, 0, 'f', 1) : QString());
            h += QStringLiteral("</p>");
        }
        for (const PlanDecision& d : profile->plan)
            if (d.node == id || std::find(d.with.begin(), d.with.end(), id) != d.with.end())
                h += tr("<p><b>Executor plan</b>: %1%2</p>")
                         .arg(esc(d.decision), d.reason.empty() ? QString() : QStringLiteral(" — ") + esc(d.reason));
    }
    setHtml(h);
}

} // namespace passlens
