#include "passlens/trace/TraceSteps.h"

#include "passlens/ir/Error.h"

#include <algorithm>
#include <cctype>
#include <set>
#include <unordered_set>

namespace passlens {

std::string TraceStep::label() const {
    switch (kind) {
    case Kind::Source: return "source";
    case Kind::Final: return "final";
    case Kind::Phase: return "phase " + name;
    case Kind::Event: return "event " + std::to_string(event) + (name.empty() ? "" : " (" + name + ")");
    }
    return name;
}

namespace {
int lastSeq(const Trace& trace) { return trace.events().empty() ? 0 : trace.events().back().seq; }

bool allDigits(const std::string& s) {
    return !s.empty() && std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isdigit(c) != 0; });
}
} // namespace

TraceStep phaseStep(const Trace& trace, std::size_t i) {
    const auto& phases = trace.phases();
    if (i >= phases.size()) throw Error("phase index " + std::to_string(i) + " out of range");
    TraceStep s;
    s.kind = TraceStep::Kind::Phase;
    s.name = phases[i].info.name;
    s.event = trace.lastEventOfPhase(i);
    s.fromEvent = i == 0 ? 0 : trace.lastEventOfPhase(i - 1);
    s.index = static_cast<int>(i) + 1;
    s.count = static_cast<int>(phases.size());
    return s;
}

TraceStep resolveStep(const Trace& trace, const std::string& spec) {
    TraceStep s;
    const auto& phases = trace.phases();
    if (spec == "source") {
        s.kind = TraceStep::Kind::Source;
        s.name = "source";
        s.count = static_cast<int>(phases.size());
        return s;
    }
    if (spec == "final") {
        s.kind = TraceStep::Kind::Final;
        s.name = "final";
        s.event = lastSeq(trace);
        s.fromEvent = phases.empty() ? 0 : trace.lastEventOfPhase(phases.size() - 1);
        s.fromEvent = std::min(s.fromEvent, s.event);
        s.index = s.count = static_cast<int>(phases.size());
        return s;
    }
    for (std::size_t i = 0; i < phases.size(); ++i)
        if (phases[i].info.name == spec) return phaseStep(trace, i);
    std::string number = spec;
    if (number.starts_with("event:"))
        number = number.substr(6);
    else if (number.starts_with("#"))
        number = number.substr(1);
    if (allDigits(number) && number.size() < 10) {
        const int seq = std::stoi(number);
        const int last = lastSeq(trace);
        if (seq > last)
            throw Error("event " + number + " does not exist (this pipeline run has events 0.." + std::to_string(last) +
                        ")");
        s.kind = TraceStep::Kind::Event;
        s.event = seq;
        s.fromEvent = seq > 0 ? seq - 1 : 0;
        s.index = seq;
        s.count = last;
        for (const auto& e : trace.events())
            if (e.seq == seq)
                s.name = e.rewriter + ", phase " + e.phase +
                         (e.status == EventStatus::Applied ? "" : std::string(", ") + statusName(e.status));
        return s;
    }
    std::string names = "source";
    for (const auto& p : phases) names += ", " + p.info.name;
    names += ", final";
    throw Error("no step '" + spec + "' in this pipeline run (phases: " + names + "; or an event number 0.." +
                std::to_string(lastSeq(trace)) + ")");
}

std::unique_ptr<FunctionGraph> graphAt(const Trace& trace, const TraceStep& step) {
    return trace.graphAfter(step.event);
}

std::vector<NodeId> nodesAddedBetween(const Trace& trace, int fromEvent, int toEvent) {
    std::set<NodeId> ids;
    for (const auto& e : trace.events()) {
        if (e.seq <= fromEvent || e.seq > toEvent || e.status != EventStatus::Applied) continue;
        ids.insert(e.added.begin(), e.added.end());
    }
    return {ids.begin(), ids.end()};
}

std::vector<NodeId> changedRegion(const Trace& trace, const FunctionGraph& after, int fromEvent, int toEvent) {
    std::vector<NodeId> added = nodesAddedBetween(trace, fromEvent, toEvent);
    if (!added.empty()) return added;
    std::set<NodeId> ids;
    auto survivor = [&ids](const Apply* n) {
        if (n && n->inGraph()) ids.insert(n->id());
    };
    // each replacement once: a merge phase replaces thousands of duplicates by one variable
    // whose clients (tens of thousands on a 100k-node graph) were walked once per event
    std::unordered_set<VarId> seen;
    for (const auto& e : trace.events()) {
        if (e.seq <= fromEvent || e.seq > toEvent || e.status != EventStatus::Applied) continue;
        for (NodeId id : e.removed)
            if (const Apply* n = after.node(id); n && !n->inGraph())
                for (const Variable* in : n->inputs()) survivor(in->owner());
        for (const auto& [old, replacement] : e.replaced)
            if (const Variable* v = after.variable(replacement); v && seen.insert(replacement).second) {
                survivor(v->owner());
                for (const Client& c : v->clients()) survivor(c.node);
            }
    }
    return {ids.begin(), ids.end()};
}

std::pair<std::string, std::string> splitDiffSpec(const std::string& spec) {
    const auto p = spec.find("..");
    if (p == std::string::npos || p == 0 || p + 2 >= spec.size())
        throw Error("--diff: expected A..B (two steps: phase names, source, final or event numbers), got '" + spec +
                    "'");
    return {spec.substr(0, p), spec.substr(p + 2)};
}

} // namespace passlens
