# Sourced by scripts/serve and scripts/test: create .venv and install the pinned requirements.
# torch is installed on its own first so pip takes the pinned CPU build.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
PYTHON="${PYTHON:-python3}"
if [ ! -x .venv/bin/python ]; then
  "$PYTHON" -m venv .venv
fi
PIP=(.venv/bin/python -m pip install --quiet --disable-pip-version-check)
"${PIP[@]}" "torch==2.13.0"
for req in "$@"; do
  "${PIP[@]}" -r "$req"
done
.venv/bin/python -m sample_models
