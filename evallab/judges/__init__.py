"""Judges: the ``Judge`` protocol, an OpenAI-compatible client, replay from recordings, cache, prompts, usage."""

from evallab.judges.types import Judge, JudgeReply, JudgeRequest, Message, Usage

__all__ = ["Judge", "JudgeReply", "JudgeRequest", "Message", "Usage"]
