// libFuzzer target: the DOT/HTML label escaper (htmlLabelText, displayedText, titleLines in
// core/layout DotWriter.h). Checks the documented properties, not only memory safety: the
// escaped text is pure ASCII with no raw `<`, `>`, `"` or `'` and no control character, the
// empty string stays empty, and displayedText is what htmlLabelText shows: escaping it again
// gives the same label, and it is a fixed point (valid UTF-8 without control characters).
#include <passlens/layout/DotWriter.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace {
void fail(const char* what, const std::string& out) {
    std::fprintf(stderr, "fuzz_escaper: %s in \"%s\"\n", what, out.c_str());
    std::abort();
}
} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string raw(reinterpret_cast<const char*>(data), size);
    const std::string out = passlens::htmlLabelText(raw);
    if (raw.empty() != out.empty()) fail("empty in, non-empty out (or the reverse)", out);
    for (const char c : out) {
        const auto u = static_cast<unsigned char>(c);
        if (u >= 0x80) fail("non-ASCII byte", out);
        if (u < 0x20 || u == 0x7F) fail("control character", out);
        if (c == '<' || c == '>' || c == '"' || c == '\'') fail("unescaped markup character", out);
    }
    const std::string shown = passlens::displayedText(raw);
    if (passlens::htmlLabelText(shown) != out) fail("htmlLabelText(displayedText(x)) != htmlLabelText(x)", shown);
    if (passlens::displayedText(shown) != shown) fail("displayedText is not a fixed point", shown);
    (void)passlens::titleLines(raw);
    return 0;
}
