// The browsable report (see Report.h), written by passlens-cli and the window through this one
// code; its figures are drawn by passlens_layout.
#include "passlens/report/Report.h"

#include <passlens/diff/GraphDiff.h>
#include <passlens/io/AtomicFile.h>
#include <passlens/ir/Error.h>
#include <passlens/layout/DrawGraph.h>
#include <passlens/layout/Export.h>
#include <passlens/layout/LayoutEngine.h>
#include <passlens/layout/TimingOverlay.h>
#include <passlens/trace/TraceSteps.h>

#include <cstdio>

namespace passlens {

namespace {

// Phase names as file names: letters, digits, '-' and '_' only.
std::string fileSafe(const std::string& s) {
    std::string out;
    for (const char c : s) {
        const bool ok =
            (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
        out += ok ? c : '_';
    }
    if (out.size() > 60) out.resize(60);
    return out.empty() ? "step" : out;
}

std::string twoDigits(int k) {
    char buf[16];
    std::snprintf(buf, sizeof buf, "%02d", k);
    return buf;
}

const char* kIndexTemplate = R"HTML(<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>PassLens report</title>
<style>
  :root { --fg:#111; --muted:#666; --line:#d0d0d0; --accent:#1B4F8A; --bg:#fff; --panel:#f6f7f9;
          --added:#1E7B34; --removed:#C62828; --rewired:#D35400; }
  * { box-sizing: border-box; }
  body { margin:0; font: 14px/1.4 Helvetica, Arial, sans-serif; color:var(--fg); background:var(--bg); }
  header { padding:10px 16px; border-bottom:1px solid var(--line); background:var(--panel); }
  header h1 { font-size:17px; margin:0 0 2px 0; }
  header .meta { color:var(--muted); font-size:12px; }
  main { display:flex; height: calc(100vh - 58px); }
  nav { width:270px; min-width:200px; overflow:auto; border-right:1px solid var(--line); padding:6px 0; }
  nav .step { padding:3px 12px; cursor:pointer; font-size:13px; white-space:nowrap; overflow:hidden; text-overflow:ellipsis; }
  nav .step:hover { background:#eef3fa; }
  nav .step.current { background:var(--accent); color:#fff; }
  nav .step.unchanged { color:#aaa; cursor:default; }
  nav .step .n { display:inline-block; width:2.2em; color:inherit; opacity:.7; }
  section { flex:1; display:flex; flex-direction:column; min-width:0; }
  .bar { display:flex; align-items:center; gap:8px; padding:8px 12px; border-bottom:1px solid var(--line); flex-wrap:wrap; }
  .bar h2 { font-size:15px; margin:0 12px 0 0; }
  button { font:inherit; padding:3px 10px; border:1px solid #aaa; background:#fff; border-radius:4px; cursor:pointer; }
  button:disabled { opacity:.4; cursor:default; }
  button.on { background:var(--accent); color:#fff; border-color:var(--accent); }
  .summary { padding:6px 12px; border-bottom:1px solid var(--line); font-size:13px; }
  table.s { border-collapse:collapse; margin-top:4px; }
  table.s td, table.s th { border:1px solid var(--line); padding:2px 8px; text-align:right; }
  table.s th { background:var(--panel); }
  table.s td:first-child { text-align:left; }
  .added { color:var(--added); font-weight:bold; } .removed { color:var(--removed); font-weight:bold; }
  .rewired { color:var(--rewired); font-weight:bold; }
  .view { flex:1; overflow:auto; background:#fff; padding:8px; }
  .view img { display:block; }
  .view.fit img { max-width:100%; height:auto; }
  .err { color:var(--removed); padding:12px; }
  .hint { color:var(--muted); font-size:12px; }
</style>
</head>
<body>
<header><h1 id="title">PassLens report</h1><div class="meta" id="meta"></div></header>
<main>
  <nav id="steps"></nav>
  <section>
    <div class="bar">
      <h2 id="stepTitle"></h2>
      <button id="prev" title="previous changed step (left arrow)">&#9664; Previous</button>
      <button id="next" title="next changed step (right arrow)">Next &#9654;</button>
      <span style="width:12px"></span>
      <button id="tabGraph">Graph</button>
      <button id="tabDiff">Diff from previous</button>
      <span style="width:12px"></span>
      <button id="fit" class="on">Fit width</button>
      <a id="open" href="#" target="_blank">open SVG</a>
      <span class="hint">keys: &#8592; &#8594; step, d diff, g graph</span>
    </div>
    <div class="summary" id="summary"></div>
    <div class="view fit" id="view"></div>
  </section>
</main>
<script type="application/json" id="data">@DATA@</script>
<script>
(function () {
  var data = JSON.parse(document.getElementById('data').textContent);
  var steps = data.steps, cur = 0, tab = 'graph';
  function el(tag, cls, text) { var e = document.createElement(tag); if (cls) e.className = cls; if (text !== undefined) e.textContent = text; return e; }
  document.getElementById('title').textContent = 'PassLens report: ' + data.source;
  document.getElementById('meta').textContent = 'pipeline ' + data.pipeline + ' \u00b7 ' + data.phases.length + ' phases, ' +
      (steps.length - 1) + ' changed \u00b7 ' + data.events + ' rewrite events \u00b7 session: ' + data.session;
    if (data.timing_svg) { // report --run: the final graph with its measured timings
      const a = document.createElement('a');
      a.href = data.timing_svg; a.textContent = ' \u00b7 final graph with timings';
      document.getElementById('meta').appendChild(a);
    }
  var nav = document.getElementById('steps');
  var navItems = [];
  data.phases.forEach(function (p) {
    var d = el('div', 'step' + (p.step < 0 ? ' unchanged' : ''));
    d.appendChild(el('span', 'n', p.step >= 0 ? String(p.step) : ''));
    d.appendChild(document.createTextNode(p.name + (p.step < 0 ? ' (no change)' : '')));
    d.title = p.name + ': ' + p.nodes_before + ' \u2192 ' + p.nodes_after + ' nodes, ' + p.applied + ' rewrites applied';
    if (p.step >= 0) d.onclick = function () { show(p.step); };
    nav.appendChild(d);
    navItems.push({ el: d, step: p.step });
  });
  function fmt(n) { return n.toLocaleString('en-US'); }
  function bytes(b) {
    var s = fmt(b.crossing) + ' B';
    if (!b.exact) s += ' + ' + b.unknown_host_gpu + ' of unknown size';
    return s;
  }
  function summary(s) {
    var box = document.getElementById('summary');
    box.textContent = '';
    if (!s.diff) { box.appendChild(el('span', 'hint', s.nodes + ' nodes \u00b7 ' + s.transfers + ' transfers \u00b7 ' +
        'bytes host\u2194GPU per run: ' + bytes(s.bytes))); return; }
    var d = s.diff, line = el('div');
    line.appendChild(el('span', 'added', '+' + d.added.length + ' added'));
    line.appendChild(document.createTextNode('  '));
    line.appendChild(el('span', 'removed', '\u2212' + d.removed.length + ' removed'));
    line.appendChild(document.createTextNode('  '));
    line.appendChild(el('span', 'rewired', d.rewired.length + ' rewired'));
    line.appendChild(document.createTextNode('  \u00b7  ' + d.unchanged + ' unchanged  \u00b7  diff ' + s.diff_from + ' \u2192 ' + s.name));
    box.appendChild(line);
    var t = el('table', 's'), head = el('tr');
    ['', 'before', 'after'].forEach(function (h) { head.appendChild(el('th', '', h)); });
    t.appendChild(head);
    function row(name, a, b) { var r = el('tr'); r.appendChild(el('td', '', name)); r.appendChild(el('td', '', a)); r.appendChild(el('td', '', b)); t.appendChild(r); }
    row('nodes', fmt(s.nodes_before), fmt(s.nodes));
    row('transfers', String(d.bytes_before.transfers), String(d.bytes_after.transfers) + '  (+' + d.transfers_added.length + ' added, ' + d.transfers_cut.length + ' cut)');
    row('bytes host\u2194GPU per run', bytes(d.bytes_before), bytes(d.bytes_after));
    box.appendChild(t);
  }
  function show(k) {
    if (k < 0 || k >= steps.length) return;
    cur = k;
    var s = steps[k];
    if (tab === 'diff' && !s.diff_svg) tab = 'graph';
    document.getElementById('stepTitle').textContent = (k === 0 ? 'source graph' : 'step ' + k + ' of ' + (steps.length - 1) + ': ' + s.name);
    document.getElementById('prev').disabled = k === 0;
    document.getElementById('next').disabled = k === steps.length - 1;
    document.getElementById('tabDiff').disabled = !s.diff_svg;
    document.getElementById('tabGraph').className = tab === 'graph' ? 'on' : '';
    document.getElementById('tabDiff').className = tab === 'diff' ? 'on' : '';
    var file = tab === 'diff' ? s.diff_svg : s.svg, err = tab === 'diff' ? s.diff_error : s.error;
    var view = document.getElementById('view');
    view.textContent = '';
    if (file) { var img = el('img'); img.src = file; img.alt = s.name; view.appendChild(img); }
    else view.appendChild(el('div', 'err', 'not drawn: ' + (err || 'no figure')));
    var open = document.getElementById('open');
    open.href = file || '#';
    summary(tab === 'diff' ? s : { nodes: s.nodes, transfers: s.transfers, bytes: s.bytes });
    navItems.forEach(function (n) { n.el.className = 'step' + (n.step < 0 ? ' unchanged' : '') + (n.step === k ? ' current' : ''); });
    if (history.replaceState) history.replaceState(null, '', '#' + k + (tab === 'diff' ? 'd' : ''));
  }
  document.getElementById('prev').onclick = function () { show(cur - 1); };
  document.getElementById('next').onclick = function () { show(cur + 1); };
  document.getElementById('tabGraph').onclick = function () { tab = 'graph'; show(cur); };
  document.getElementById('tabDiff').onclick = function () { tab = 'diff'; show(cur); };
  document.getElementById('fit').onclick = function () {
    var v = document.getElementById('view'); v.classList.toggle('fit');
    this.className = v.classList.contains('fit') ? 'on' : '';
  };
  document.addEventListener('keydown', function (e) {
    if (e.key === 'ArrowLeft') show(cur - 1);
    else if (e.key === 'ArrowRight') show(cur + 1);
    else if (e.key === 'd') { tab = 'diff'; show(cur); }
    else if (e.key === 'g') { tab = 'graph'; show(cur); }
  });
  var m = /^#(\d+)(d?)$/.exec(location.hash);
  if (m) { tab = m[2] ? 'diff' : 'graph'; show(Math.min(+m[1], steps.length - 1)); }
  else show(steps.length > 1 ? 1 : 0);
})();
</script>
</body>
</html>
)HTML";

} // namespace

namespace {
ReportResult writeReportFiles(const Trace& trace, const std::filesystem::path& dir, const ReportOptions& ro,
                              std::vector<std::string>& written);
} // namespace

ReportResult writeReport(const Trace& trace, const std::filesystem::path& dir, const ReportOptions& ro) {
    std::error_code ec;
    // The topmost folder this call creates: removed with everything in it if the report fails.
    std::filesystem::path created;
    for (std::filesystem::path p = dir; !p.empty() && !std::filesystem::exists(std::filesystem::symlink_status(p, ec));
         p = p.parent_path()) {
        created = p;
        if (p == p.parent_path()) break;
    }
    std::filesystem::create_directories(dir, ec);
    if (ec || !std::filesystem::is_directory(dir)) {
        if (!created.empty()) std::filesystem::remove_all(created, ec);
        throw Error(dir.string() + ": cannot create the report folder: " +
                    (ec ? ec.message() : std::string("a file of that name is in the way")));
    }
    std::vector<std::string> written;
    try {
        return writeReportFiles(trace, dir, ro, written);
    } catch (...) { // nothing half-written stays: the folder made here, else the files written
        if (!created.empty()) {
            std::filesystem::remove_all(created, ec);
        } else {
            for (const auto& f : written) std::filesystem::remove(f, ec);
        }
        throw;
    }
}

namespace {
ReportResult writeReportFiles(const Trace& trace, const std::filesystem::path& dir, const ReportOptions& ro,
                              std::vector<std::string>& written) {
    ReportResult result;
    std::vector<std::string>& files = result.files;
    const std::string sessionName = "session.passlens";
    nlohmann::json profiles = trace.profiles();
    if (ro.profile) {
        const nlohmann::json profile = ro.profile->toJson();
        profiles = nlohmann::json::array({profile});
        written.push_back((dir / "profile.json").string());
        writeFileAtomic(dir / "profile.json", profile.dump(1) + "\n");
        files.push_back((dir / "profile.json").string());
    }
    written.push_back((dir / sessionName).string());
    trace.save(dir / sessionName, ro.sourcePath, profiles);
    files.push_back((dir / sessionName).string());

    const auto& phases = trace.phases();
    // Steps: the source, then every phase that changed the graph.
    std::vector<TraceStep> steps{resolveStep(trace, "source")};
    std::vector<int> phaseStepIndex(phases.size(), -1);
    for (std::size_t i = 0; i < phases.size(); ++i) {
        if (!phases[i].changed) continue;
        TraceStep s = phaseStep(trace, i);
        if (s.event == steps.back().event) continue; // changed flag without an applied event
        phaseStepIndex[i] = static_cast<int>(steps.size());
        steps.push_back(s);
    }

    LayoutEngine engine;
    LayoutOptions lo;
    lo.budget = std::chrono::milliseconds(static_cast<long long>(ro.budgetSeconds * 1000));
    int& failures = result.failures;
    auto draw = [&](const DrawGraph& g, const std::string& name, nlohmann::json& entry, const char* fileKey,
                    const char* errorKey) {
        std::string svg;
        try {
            // laid out for the figure only: rendered by the process that ran dot, no geometry read
            RenderOptions figure;
            figure.geometry = false;
            RenderedLayout drawn = engine.layoutAndRender(g, figure, lo);
            const LayoutResult& layout = drawn.layout;
            for (const auto& w : layout.warnings) result.warnings.push_back(name + ": Graphviz: " + w);
            svg = std::move(drawn.bytes);
            if (layout.focused) entry[std::string(fileKey) + "_focused"] = layout.focusReason;
            if (!layout.budgetNote.empty()) result.warnings.push_back(name + ": " + layout.budgetNote);
        } catch (
            const Error& e) { // a figure Graphviz cannot draw: reported, the report goes on (out of memory ends it)
            ++failures;
            entry[errorKey] = e.what();
            result.warnings.push_back(name + ": " + e.what());
            return;
        }
        written.push_back((dir / name).string());
        writeFileAtomic(dir / name, svg); // a write that fails (disk full) ends the report
        files.push_back((dir / name).string());
        entry[fileKey] = name;
    };

    nlohmann::json stepDocs = nlohmann::json::array();
    std::unique_ptr<FunctionGraph> previous;
    for (std::size_t k = 0; k < steps.size(); ++k) {
        const TraceStep& s = steps[k];
        if (ro.progress) ro.progress(static_cast<int>(k), static_cast<int>(steps.size()) - 1);
        auto g = graphAt(trace, s);
        const TransferBytes tb = transferBytes(*g);
        nlohmann::json entry = {{"name", s.kind == TraceStep::Kind::Phase ? s.name : s.label()},
                                {"nodes", g->nodeCount()},
                                {"transfers", tb.transfers},
                                {"bytes", transferBytesJson(tb)}};
        DrawOptions opt;
        opt.nestedGraphs = true; // If branches, Loop bodies as clusters
        opt.caption.source = ro.sourceLabel;
        opt.caption.pipeline = ro.pipeline;
        opt.caption.step = s.label();
        opt.caption.stepIndex = static_cast<int>(k);
        opt.caption.stepCount = static_cast<int>(steps.size()) - 1;
        opt.caption.note = k == 0 ? ""
                                  : "changed step " + std::to_string(k) + " of " + std::to_string(steps.size() - 1) +
                                        " (phase " + std::to_string(s.index) + " of " + std::to_string(s.count) + ")";
        opt.caption.stepIndex = s.index;
        opt.caption.stepCount = s.count;
        opt.caption.unit = "phase";
        const std::string base =
            twoDigits(static_cast<int>(k)) + "_" + fileSafe(k == 0 ? std::string("source") : s.name);
        opt.focus = changedRegion(trace, *g, k == 0 ? 0 : steps[k - 1].event, s.event);
        draw(drawGraph(*g, opt), "step_" + base + ".svg", entry, "svg", "error");
        if (previous) {
            const GraphDiff d = diff(*previous, *g);
            DrawOptions dopt = opt;
            dopt.caption.step = "diff " + steps[k - 1].label() + " \xE2\x86\x92 " + s.label();
            dopt.caption.stepIndex = dopt.caption.stepCount = -1;
            draw(drawDiff(*previous, *g, d, dopt), "diff_" + base + ".svg", entry, "diff_svg", "diff_error");
            entry["diff"] = d.toJson();
            entry["diff_from"] = steps[k - 1].kind == TraceStep::Kind::Phase ? steps[k - 1].name : steps[k - 1].label();
            entry["nodes_before"] = previous->nodeCount();
        }
        stepDocs.push_back(entry);
        previous = std::move(g);
    }
    if (ro.profile && previous) { // the measured timings painted onto the final graph
        DrawOptions topt;
        topt.nestedGraphs = true;
        topt.caption.source = ro.sourceLabel;
        topt.caption.pipeline = ro.pipeline;
        topt.caption.step = "final, timings " + ro.profile->device;
        DrawGraph tg = drawGraph(*previous, topt);
        applyTiming(tg, *ro.profile);
        nlohmann::json entry;
        draw(tg, "final_timing.svg", entry, "svg", "error");
    }

    nlohmann::json phaseDocs = nlohmann::json::array();
    for (std::size_t i = 0; i < phases.size(); ++i) {
        const auto& p = phases[i];
        phaseDocs.push_back({{"name", p.info.name},
                             {"step", phaseStepIndex[i]},
                             {"nodes_before", p.nodesBefore},
                             {"nodes_after", p.nodesAfter},
                             {"applied", p.lastEvent > 0 ? p.lastEvent - p.firstEvent + 1 : 0},
                             {"time_us", p.timeUs}});
    }
    const nlohmann::json data = {{"source", ro.sourceLabel},
                                 {"timing_svg", ro.profile ? "final_timing.svg" : ""},
                                 {"pipeline", ro.pipeline},
                                 {"session", sessionName},
                                 {"events", trace.events().size()},
                                 {"phases", phaseDocs},
                                 {"steps", stepDocs}};
    // Embedded in a <script> element: "</" must not appear in it.
    std::string json = data.dump();
    for (std::size_t p = json.find("</"); p != std::string::npos; p = json.find("</", p + 3))
        json.replace(p, 2, "<\\/");
    std::string html = kIndexTemplate;
    html.replace(html.find("@DATA@"), 6, json);
    written.push_back((dir / "index.html").string());
    writeFileAtomic(dir / "index.html", html);
    files.push_back((dir / "index.html").string());
    result.steps = steps.size();

    return result;
}
} // namespace

} // namespace passlens
