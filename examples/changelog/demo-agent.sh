#!/bin/sh
# The stand-in agent that recorded replay.jsonl: canned answers by phase (TFC_PHASE_ID) and
# item (TFC_ITEM_INDEX), so the demo runs without a model. Prompt on stdin, answer on stdout.
cat > /dev/null
case "$TFC_PHASE_ID:$TFC_ITEM_INDEX" in
  classify:0) echo '{"type": "feature", "note": "New --max-usd flag caps what a run may spend."}' ;;
  classify:1) echo '{"type": "fix", "note": "Agents that only write to stderr no longer hit the idle timeout."}' ;;
  classify:2) echo '{"type": "breaking", "note": "The parallel shorthand field jobs is now tasks; rename it in your flows."}' ;;
  classify:3) echo '{"type": "chore", "note": "Dependency update (logos 0.16)."}' ;;
  notes:*) cat <<'NOTES'
# 2.0.0

## Breaking changes
- The parallel shorthand field `jobs` is now `tasks`; rename it in your flows.

## Features
- New `--max-usd` flag caps what a run may spend.

## Fixes
- Agents that only write to stderr no longer hit the idle timeout.
NOTES
  ;;
  *) echo "demo agent: no canned answer for $TFC_PHASE_ID" >&2; exit 1 ;;
esac
