// MainWindow's exports: File > Export view (the drawing, the visible area or the selection), the HTML
// report and the session file.
#include "passlens/ui/MainWindow.h"
#include "passlens/ui/WindowLayout.h"

#include "GraphScene.h"
#include "GraphView.h"
#include "JobRunner.h"

#include <passlens/io/Failure.h>
#include <passlens/layout/Export.h>
#include <passlens/report/Report.h>

#include <QComboBox>
#include <QDialog>
#include <QDialogButtonBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QMessageBox>
#include <QSpinBox>
#include <QStandardItemModel>
#include <QStatusBar>

#include <set>

namespace passlens {

QString MainWindow::suggestedExportName(const QString& extension) const {
    QString base = QFileInfo(m_session->path()).fileName();
    for (const char* ext : {".passlens.json", ".passlens", ".graph.json", ".onnx", ".json"})
        if (base.endsWith(QLatin1String(ext), Qt::CaseInsensitive)) {
            base.chop(static_cast<int>(qstrlen(ext)));
            break;
        }
    if (base.isEmpty()) base = QStringLiteral("graph");
    QString name = QStringLiteral("%1-step%2").arg(base).arg(m_session->currentStep());
    if (m_session->showingNested())
        name += QStringLiteral("-nested");
    else if (m_session->diffFrom())
        name += QStringLiteral("-diff");
    return name + QLatin1Char('.') + extension;
}

void MainWindow::exportView() {
    if (!m_session->layout()) return;
    // what to export: the drawing, the visible area or the selection; portrait or landscape
    QDialog dialog(this);
    dialog.setWindowTitle(tr("Export view"));
    auto* form = new QFormLayout(&dialog);
    auto* area = new QComboBox;
    area->addItems({tr("The whole drawing"), tr("The visible area"), tr("The selection and its neighbours")});
    const bool selected = !m_scene->selectedItems().isEmpty();
    if (!selected) qobject_cast<QStandardItemModel*>(area->model())->item(2)->setEnabled(false);
    auto* hops = new QSpinBox;
    hops->setRange(0, 10);
    hops->setValue(1);
    hops->setSuffix(tr(" hops"));
    hops->setEnabled(false);
    connect(area, &QComboBox::currentIndexChanged, hops, [hops](int i) { hops->setEnabled(i == 2); });
    auto* orientation = new QComboBox;
    orientation->addItems({tr("Portrait: as shown (top to bottom)"), tr("Landscape: left to right")});
    form->addRow(tr("Export"), area);
    form->addRow(tr("Neighbours"), hops);
    form->addRow(tr("Orientation"), orientation);
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel);
    connect(buttons, &QDialogButtonBox::accepted, &dialog, &QDialog::accept);
    connect(buttons, &QDialogButtonBox::rejected, &dialog, &QDialog::reject);
    form->addRow(buttons);
    if (dialog.exec() != QDialog::Accepted) return;
    ExportRequest request;
    request.area = static_cast<ExportRequest::Area>(area->currentIndex());
    request.hops = hops->value();
    request.landscape = orientation->currentIndex() == 1;
    QString name = suggestedExportName();
    if (request.area == ExportRequest::Area::Visible)
        name.replace(QLatin1String(".svg"), QLatin1String("-visible.svg"));
    if (request.area == ExportRequest::Area::Selection)
        name.replace(QLatin1String(".svg"), QLatin1String("-selection.svg"));
    const QString path = QFileDialog::getSaveFileName(this, tr("Export view"), name,
                                                      tr("SVG (*.svg);;PDF (*.pdf);;PNG (*.png);;DOT (*.dot)"));
    if (!path.isEmpty()) exportTo(path, request);
}

bool MainWindow::exportTo(const QString& path, const ExportRequest& request) {
    const auto& layout = m_session->layout();
    if (!layout) {
        statusBar()->showMessage(tr("Nothing to export: no drawing yet"), 4000);
        return false;
    }
    const auto fmt = formatFromExtension(path.toStdString()).value_or(RenderFormat::Svg);
    const DiffView view = DiffView::Overlay;
    if (request.area == ExportRequest::Area::Drawing && !request.landscape) {
        // the drawing as shown: no new layout
        try {
            const std::size_t n = exportLayout(m_session->layoutEngine(), *layout, path.toStdString(), fmt, view);
            log(tr("Exported %1 (%2 bytes)").arg(path).arg(n));
            emit exported(path, true, {});
        } catch (...) {
            const QString message = QString::fromStdString(currentExceptionMessage("export " + path.toStdString()));
            QMessageBox::warning(this, tr("Export"), message);
            emit exported(path, false, message);
        }
        return true;
    }
    // the seeds of a partial export: drawn keys (placeholders and scope boxes stand for themselves)
    std::set<std::string> seeds;
    if (request.area == ExportRequest::Area::Selection) {
        for (QGraphicsItem* item : m_scene->selectedItems())
            if (auto* node = dynamic_cast<GraphNodeItem*>(item)) seeds.insert(node->node().key);
    } else if (request.area == ExportRequest::Area::Visible) {
        const QRectF visible = m_view->visibleArea();
        for (GraphNodeItem* node : m_scene->nodeItems())
            if (visible.intersects(node->sceneBoundingRect())) seeds.insert(node->node().key);
    }
    if (request.area != ExportRequest::Area::Drawing && seeds.empty()) {
        statusBar()->showMessage(request.area == ExportRequest::Area::Selection ? tr("Nothing selected to export")
                                                                                : tr("No node on screen to export"),
                                 4000);
        return false;
    }
    const DrawingRequest drawing = m_session->drawingRequest();
    const bool whole = request.area == ExportRequest::Area::Drawing;
    const int hops = request.area == ExportRequest::Area::Selection ? std::max(0, request.hops) : 0;
    const bool landscape = request.landscape;
    const std::string target = path.toStdString();
    LayoutEngine* engine = &m_session->layoutEngine();
    log(tr("Exporting %1 …").arg(path));
    Job<QString> job;
    job.done = [this, path](const QString& error) {
        if (error.isEmpty()) {
            log(tr("Exported %1").arg(path));
        } else {
            log(error);
            statusBar()->showMessage(error, 8000);
        }
        emit exported(path, error.isEmpty(), error);
    };
    job.work = [=](const JobControl<QString>& control) -> QString {
        try {
            DrawGraph dg = drawing.draw();
            if (!whole) {
                // the seeds and `hops` around them; the rest folded into "… N nodes" boxes
                for (DrawNode& n : dg.nodes) n.seed = seeds.count(n.key) > 0;
                dg = focusView(dg, hops, std::max<std::size_t>(seeds.size() + 16, 400));
                dg.focusAround = hops > 0 ? "the selection" : "the visible area";
            }
            LayoutOptions options = windowLayoutOptions();
            if (landscape) options.dot.rankdir = "LR";
            if (!whole) options.nodeThreshold = std::max(options.nodeThreshold, dg.nodes.size());
            // laid out for the file only: rendered by the process that ran dot (dot's own drawing)
            (void)exportDrawing(*engine, dg, target, RenderOptions{fmt, view, 96, false}, options, nullptr,
                                &control.token());
            return {};
        } catch (...) {
            return QString::fromStdString(currentExceptionMessage("export " + target));
        }
    };
    m_session->jobs().start(std::move(job));
    return true;
}

void MainWindow::exportReport() {
    if (!m_session->trace()) return;
    const QString dir = QFileDialog::getExistingDirectory(this, tr("Report folder"));
    if (dir.isEmpty()) return;
    // the same code as `passlens-cli report`, on a worker
    ReportOptions opt;
    opt.sourcePath = m_session->path().toStdString();
    opt.sourceLabel = QFileInfo(m_session->path()).fileName().toStdString();
    opt.pipeline = m_session->pipelineName().toStdString();
    opt.profile = m_profile; // the report's files
    auto trace = std::make_shared<Trace>(*m_session->trace());
    log(tr("Writing the report into %1 …").arg(dir));
    Job<QString> job;
    job.done = [this](const QString& line) { log(line); };
    job.work = [trace, opt, dir](const JobControl<QString>&) {
        try {
            const ReportResult r = writeReport(*trace, dir.toStdString(), opt);
            return QObject::tr("Report: %1 files in %2, open %2/index.html%3")
                .arg(r.files.size())
                .arg(dir)
                .arg(r.failures ? QObject::tr(" (%1 figures failed)").arg(r.failures) : QString());
        } catch (...) {
            return QObject::tr("report failed: %1")
                .arg(QString::fromStdString(currentExceptionMessage("report " + dir.toStdString())));
        }
    };
    m_session->jobs().start(std::move(job));
}

void MainWindow::saveSession() {
    const QString path = QFileDialog::getSaveFileName(
        this, tr("Save session"), QFileInfo(m_session->path()).completeBaseName() + QStringLiteral(".passlens"),
        tr("Sessions (*.passlens *.passlens.json)"));
    if (path.isEmpty()) return;
    try {
        m_session->saveSession(path);
        log(tr("Saved %1").arg(path));
    } catch (...) {
        QMessageBox::warning(this, tr("Save session"),
                             QString::fromStdString(currentExceptionMessage("save session " + path.toStdString())));
    }
}

} // namespace passlens
