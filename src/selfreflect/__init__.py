"""SelfReflect workflow: sample answers, summarise them, score summaries against the answers."""

__version__ = "0.2.0"
