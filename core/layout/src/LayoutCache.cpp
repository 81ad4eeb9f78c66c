#include "passlens/layout/LayoutEngine.h"

#include <mutex>

namespace passlens {

struct LayoutEngine::CacheEntry {
    std::uint64_t hash = 0;
    std::string key;
    LayoutResult result;
};

LayoutEngine::LayoutEngine(std::size_t cacheEntries)
    : m_capacity(cacheEntries) {}

LayoutEngine::~LayoutEngine() = default;

std::optional<LayoutResult> LayoutEngine::cached(std::uint64_t hash, const std::string& key) const {
    std::lock_guard lock(m_cacheMutex);
    for (auto it = m_cache.begin(); it != m_cache.end(); ++it) {
        if (it->hash != hash || it->key != key) continue;
        m_cache.splice(m_cache.begin(), m_cache, it);
        ++m_hits;
        LayoutResult r = m_cache.front().result;
        r.fromCache = true;
        r.layoutMs = 0;
        return r;
    }
    ++m_misses;
    return std::nullopt;
}

void LayoutEngine::store(std::uint64_t hash, const std::string& key, const LayoutResult& result) {
    if (m_capacity == 0) return;
    std::lock_guard lock(m_cacheMutex);
    m_cache.push_front(CacheEntry{hash, key, result});
    while (m_cache.size() > m_capacity) m_cache.pop_back();
}

std::size_t LayoutEngine::cacheHits() const {
    std::lock_guard lock(m_cacheMutex);
    return m_hits;
}

std::size_t LayoutEngine::cacheMisses() const {
    std::lock_guard lock(m_cacheMutex);
    return m_misses;
}

void LayoutEngine::clearCache() {
    std::lock_guard lock(m_cacheMutex);
    m_cache.clear();
}

} // namespace passlens
