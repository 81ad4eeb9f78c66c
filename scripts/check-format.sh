#!/usr/bin/env bash
# Checks that every tracked C++/CUDA file (.cpp, .h, .cu, .inl) is formatted as the repository's
# .clang-format says, with clang-format 14 (Debian 12's; installed by scripts/install-deps.sh).
# Changes nothing; lists each file and place clang-format would change and exits 1 if there is
# any. CI runs it before building. To fix a file: clang-format -i FILE.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

CLANG_FORMAT=${CLANG_FORMAT:-clang-format}
if ! command -v "$CLANG_FORMAT" >/dev/null 2>&1; then
    echo "check-format: $CLANG_FORMAT not found (bash scripts/install-deps.sh installs it)" >&2
    exit 1
fi
version=$("$CLANG_FORMAT" --version | grep -o 'version [0-9]*' | grep -o '[0-9]*$' || true)
if [[ "$version" != 14 ]]; then
    echo "check-format: warning: $CLANG_FORMAT is version ${version:-unknown}, the tree is formatted with 14" >&2
fi
git ls-files -z '*.cpp' '*.h' '*.cu' '*.inl' | xargs -0 "$CLANG_FORMAT" --dry-run -Werror
echo "check-format: $(git ls-files '*.cpp' '*.h' '*.cu' '*.inl' | wc -l) files formatted as .clang-format says"
