#include "JobRunner.h"

namespace passlens {

JobRunner::JobRunner(QObject* parent)
    : QObject(parent) {}

JobRunner::~JobRunner() {
    cancelAll();
    waitForAll();
}

bool JobRunner::cancel(JobId id) {
    const auto it = m_jobs.find(id);
    if (it == m_jobs.end() || it->second.cancel->cancelled()) return false;
    it->second.cancel->cancel();
    return true;
}

void JobRunner::cancelAll() {
    for (auto& [id, entry] : m_jobs) entry.cancel->cancel();
}

void JobRunner::waitForAll() {
    for (auto& [id, entry] : m_jobs) entry.watcher->waitForFinished();
}

JobId JobRunner::newest(const QString& lane) const {
    for (auto it = m_jobs.rbegin(); it != m_jobs.rend(); ++it)
        if (it->second.lane == lane && !it->second.superseded) return it->first;
    return 0;
}

bool JobRunner::cancelRequested(JobId id) const {
    const auto it = m_jobs.find(id);
    return it != m_jobs.end() && it->second.cancel->cancelled();
}

void JobRunner::supersede(const QString& lane) {
    for (auto& [id, entry] : m_jobs)
        if (entry.lane == lane && !entry.superseded) {
            entry.superseded = true;
            entry.cancel->cancel(); // the worker stops at once (Graphviz polls the token)
        }
}

JobEnd JobRunner::settle(JobId id) {
    const auto it = m_jobs.find(id);
    if (it == m_jobs.end()) return JobEnd::Superseded; // (not reached: each job settles once)
    const JobEnd end = it->second.superseded            ? JobEnd::Superseded
                       : it->second.cancel->cancelled() ? JobEnd::Cancelled
                                                        : JobEnd::Done;
    m_jobs.erase(it);
    return end;
}

} // namespace passlens
