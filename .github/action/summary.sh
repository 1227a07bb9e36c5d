#!/usr/bin/env bash
# action.yml's last report step: a link to the uploaded HTML report (the job's artifact) in the job summary,
# under the table `vgprscope check` wrote there. VGPRSCOPE_HTML_URL: the artifact's URL (upload-artifact's
# artifact-url output); VGPRSCOPE_HTML: the report's file name.
set -uo pipefail
[ -n "${GITHUB_STEP_SUMMARY:-}" ] || exit 0
if [ -n "${VGPRSCOPE_HTML_URL:-}" ]; then
  printf '\n**[HTML report with charts](%s)** (%s: occupancy staircases, the verdict, each kernel linked to its file)\n' \
    "$VGPRSCOPE_HTML_URL" "${VGPRSCOPE_HTML:-vgprscope-report.html}" >> "$GITHUB_STEP_SUMMARY"
else
  printf '\nNo HTML report was uploaded.\n' >> "$GITHUB_STEP_SUMMARY"
fi
