#!/usr/bin/env bash
# action.yml's gate step: `vgprscope check` (or `vgprscope diff`, with VGPRSCOPE_DIFF_TRITON), the table in the
# log, markdown in the job summary, ::error annotations, and a SARIF file for code scanning. The gate's exit
# code goes to the step's outputs (exit-code) and the step itself succeeds, so that the SARIF and HTML uploads
# run before the action's last step fails the job by that code. The HTML report (one self-contained page with
# charts) goes to VGPRSCOPE_HTML, uploaded as the job's artifact and linked from the summary (summary.sh).
set -uo pipefail
args=()
for arch in ${VGPRSCOPE_ARCHS:-}; do args+=(--arch "$arch"); done
[ -n "${VGPRSCOPE_CAPTURE:-}" ] && args+=(--capture "$VGPRSCOPE_CAPTURE")
[ "${VGPRSCOPE_STRICT:-false}" = "true" ] && args+=(--strict)
sarif=${VGPRSCOPE_SARIF:-vgprscope.sarif}
html=${VGPRSCOPE_HTML-vgprscope-report.html}
out=${GITHUB_OUTPUT:-/dev/null}

if [ -n "${VGPRSCOPE_DIFF_TRITON:-}" ]; then
  installed=$(python -c "import importlib.metadata as m; print(m.version('triton'))")
  cmd=(vgprscope diff --triton "$installed" --triton "$VGPRSCOPE_DIFF_TRITON" "${args[@]}")
else
  [ -n "${VGPRSCOPE_BASELINE:-}" ] && args+=(--baseline "$VGPRSCOPE_BASELINE")
  cmd=(vgprscope check "${args[@]}")
fi

echo "::group::${cmd[*]}"
"${cmd[@]}"            # the table in the log; check also writes the job summary and the annotations
code=$?
echo "::endgroup::"
if [ "$code" -le 2 ]; then
  "${cmd[@]}" --format sarif --output "$sarif" 2>/dev/null   # from the compile cache: no compile again
  sarif_code=$?
  if [ "$sarif_code" -le 1 ] && [ -s "$sarif" ]; then
    echo "sarif=$sarif" >> "$out"
  else
    echo "::warning title=vgprscope::no SARIF written (exit $sarif_code)"
  fi
  if [ -n "$html" ]; then
    "${cmd[@]}" --format html --output "$html" 2>/dev/null   # from the compile cache too
    html_code=$?
    if [ "$html_code" -le 2 ] && [ -s "$html" ]; then
      echo "html=$html" >> "$out"
    else
      echo "::warning title=vgprscope::no HTML report written (exit $html_code)"
    fi
  fi
  if [ -n "${VGPRSCOPE_DIFF_TRITON:-}" ] && [ -n "${GITHUB_STEP_SUMMARY:-}" ]; then
    "${cmd[@]}" --format md >> "$GITHUB_STEP_SUMMARY" 2>/dev/null || true
  fi
fi
echo "exit-code=$code" >> "$out"
echo "vgprscope: ${cmd[0]} ${cmd[1]} exited $code"
exit 0
