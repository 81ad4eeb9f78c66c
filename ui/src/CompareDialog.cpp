#include "CompareDialog.h"

#include "GraphScene.h"
#include "GraphView.h"

#include <passlens/diff/GraphDiff.h>
#include <passlens/layout/DotWriter.h>
#include <passlens/pipeline/OpenAndOptimize.h>
#include <passlens/pipeline/OptimizeReport.h>
#include <passlens/ui/WindowLayout.h>

#include <QGuiApplication>
#include <QLabel>
#include <QScreen>
#include <QPlainTextEdit>
#include <QSplitter>
#include <QTabWidget>
#include <QTimer>
#include <QVBoxLayout>

namespace passlens {

Comparison compareFinalGraphs(const FunctionGraph& source, Comparison c, const Caption& caption, LayoutEngine& engine,
                              const CancelToken* cancel) {
    try {
        PipelineRequest request;
        request.pipeline = c.otherName.toStdString();
        OptimizedGraph o = optimizeGraph(source.clone(), request); // a copy with the source's ids
        std::shared_ptr<const Trace> t(std::move(o.trace));
        std::unique_ptr<FunctionGraph> work = std::move(o.graph);
        c.otherText = QString::fromStdString(optimizeText(o.run, *work, *t));
        // the nodes both pipelines made alike take one id, so the diff shows real differences
        AlignedGraph aligned = alignIds(*c.myFinal, *work);
        const GraphDiff d = diff(*c.myFinal, *aligned.graph);
        c.summary = d.empty() ? QObject::tr("Both pipelines end in the same graph (%1 nodes, all alike): the "
                                            "drawing has no difference to show; their optimizer profiles may differ")
                                    .arg(c.myFinal->nodeCount())
                              : QObject::tr("Final graphs: %1 vs %2 nodes, %3 alike; %4")
                                    .arg(c.myFinal->nodeCount())
                                    .arg(work->nodeCount())
                                    .arg(aligned.matchedNodes)
                                    .arg(QString::fromStdString(d.summary()));
        c.identical = d.empty();
        DrawOptions opt;
        opt.caption = caption;
        const DrawGraph dg = drawDiff(*c.myFinal, *aligned.graph, d, opt);
        c.layout = engine.layout(dg, windowLayoutOptions(), cancel);
        c.otherFinal = std::shared_ptr<const FunctionGraph>(std::move(aligned.graph));
        c.otherIds = std::move(aligned.originalNode);
        c.otherTrace = std::move(t);
    } catch (const std::exception& e) {
        c.error = QString::fromStdString(e.what());
    }
    return c;
}

CompareDialog::CompareDialog(const Comparison& c, const Trace* mine, bool dark, QWidget* parent)
    : QDialog(parent) {
    const QString& mineName = c.mineName;
    const QString& other = c.otherName;
    const auto& myFinal = c.myFinal;
    const auto& otherFinal = c.otherFinal;
    const auto& otherIds = c.otherIds;
    const auto& layout = c.layout;
    const QString summary = c.error.isEmpty() ? c.summary : tr("Comparison failed: %1").arg(c.error);
    setAttribute(Qt::WA_DeleteOnClose);
    setWindowTitle(tr("%1 vs %2").arg(mineName, other));
    auto* l = new QVBoxLayout(this);
    auto* head = new QLabel(
        summary.toHtmlEscaped() +
        tr("<br><span style='color:%1'>■ only in %2</span> · <span style='color:%3'>■ only in %4</span> · "
           "<span style='color:%5'>■ rewired</span> · double-click a node of %2 to go to the rewrite that made it")
            .arg(QString::fromLatin1(defaultPalette().removedBorder), mineName.toHtmlEscaped(),
                 QString::fromLatin1(defaultPalette().addedBorder), other.toHtmlEscaped(),
                 QString::fromLatin1(defaultPalette().rewiredBorder)));
    head->setWordWrap(true);
    l->addWidget(head);
    auto* tabs = new QTabWidget;
    if (layout) {
        auto* scene = new GraphScene(this);
        scene->setDark(dark);
        // tooltips: in which pipeline the node is and which rewrite made it there
        QHash<QString, QString> tips;
        for (const LayoutNode& n : layout->nodes) {
            if (n.node < 0) continue;
            QStringList where;
            auto made = [](const Trace* t, NodeId id, const QString& name) {
                const int ev = t ? t->createdBy(id) : 0;
                if (ev <= 0) return tr("%1: from the source graph").arg(name);
                return tr("%1: created by #%2 %3")
                    .arg(name)
                    .arg(ev)
                    .arg(QString::fromStdString(t->events()[static_cast<std::size_t>(ev - 1)].rewriter));
            };
            if (myFinal->node(n.node) && myFinal->node(n.node)->inGraph()) where << made(mine, n.node, mineName);
            if (otherFinal && otherFinal->node(n.node) && otherFinal->node(n.node)->inGraph()) {
                const auto original = otherIds.find(n.node);
                where << made(c.otherTrace.get(), original != otherIds.end() ? original->second : n.node, other);
            }
            tips.insert(QString::fromStdString(n.key), QString::fromStdString(n.title + "\n" + n.subtitle) +
                                                           QStringLiteral("\n") + where.join(QLatin1Char('\n')));
        }
        scene->setLayout(*layout, tips);
        auto* view = new GraphView(scene);
        view->setObjectName(QStringLiteral("compareView"));
        connect(scene, &GraphScene::nodeActivated, this, [this, myFinal](const QString& key) {
            if (!key.startsWith(QLatin1Char('n'))) return;
            const NodeId id = key.mid(1).toLongLong();
            if (!myFinal->node(id) || !myFinal->node(id)->inGraph()) return;
            emit nodeChosen(id);
        });
        tabs->addTab(view, tr("Final graphs drawn"));
        QTimer::singleShot(0, view, [view] {
            view->fit();
            view->updateMinimap();
        });
    }
    auto* split = new QSplitter;
    for (const QString& t : {c.myText, c.otherText}) {
        auto* e = new QPlainTextEdit(t);
        e->setReadOnly(true);
        e->setLineWrapMode(QPlainTextEdit::NoWrap);
        e->setFont(QFont(QStringLiteral("monospace"), 8));
        split->addWidget(e);
    }
    tabs->addTab(split, tr("Optimizer profiles"));
    l->addWidget(tabs, 1);
    // 1300 x 800, or 90% of the screen it opens on (a 1280 x 800 laptop, QT_SCALE_FACTOR=2)
    QSize size(1300, 800);
    if (const QScreen* screen = parent ? parent->screen() : QGuiApplication::primaryScreen())
        size = size.boundedTo(screen->availableGeometry().size() * 0.9);
    resize(size);
}

} // namespace passlens
