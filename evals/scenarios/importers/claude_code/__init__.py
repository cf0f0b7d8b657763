"""Claude Code transcripts as replay scenarios, and as the calls the cache check
prices (docs/claude-code.md): transcript.py reads one file, sessions.py finds
sessions and their sub-agents, replay.py sizes each call's prompt from the bill,
scenario.py writes the replays."""

from packproof.evals.scenarios.importers.claude_code.scenario import import_claude_code

__all__ = ["import_claude_code"]
