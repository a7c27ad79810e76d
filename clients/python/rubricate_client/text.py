"""What the judge should see of a trainer's text: the same rules as the server's ``/get_reward``
and slime adapters (``src/server/adapters/conversation.ts``), so every entry point of this
client grades a response the same way whichever route it takes.

* ``strip_end_of_turn``: end-of-turn and padding tokens left at the end of a response
  (``END_OF_TURN_TOKENS``, plus the tokenizer's own special tokens where the trainer gives
  them), and the whitespace around them, removed; stacked ones too.
* ``split_query``: the response of a templated query (OpenRLHF's ``query`` = templated prompt
  + response): the rest after the prompt when the query starts with it, else the text after
  the last assistant-turn marker of a known template, else the whole query.
* ``prompt_messages``: the messages of a templated prompt (ChatML, Llama 3, Gemma); any other
  text is one user message.

``END_OF_TURN_TOKENS`` and ``ASSISTANT_MARKERS`` are the server's lists entry for entry (a test
reads both files and compares them): change them together.
"""

from __future__ import annotations

import re
from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple

#: Tokens a decoder leaves at the end of a response when special tokens are kept: end of turn
#: (ChatML, Llama 3, Gemma, Phi, Mistral, DeepSeek) and padding (Qwen's ``<|endoftext|>``,
#: ``<pad>``, ``<|pad|>``, Llama 3.1's ``<|finetune_right_pad_id|>``).
END_OF_TURN_TOKENS: Tuple[str, ...] = (
    "<|im_end|>",
    "<|eot_id|>",
    "<|end_of_text|>",
    "<|endoftext|>",
    "<end_of_turn>",
    "<eos>",
    "<|end|>",
    "</s>",
    "<｜end▁of▁sentence｜>",
    "<pad>",
    "<|pad|>",
    "<|finetune_right_pad_id|>",
)

#: Where the assistant's turn starts in a templated query, by template.
ASSISTANT_MARKERS: Tuple[str, ...] = (
    "<|im_start|>assistant\n",
    "<|start_header_id|>assistant<|end_header_id|>\n\n",
    "<|start_header_id|>assistant<|end_header_id|>",
    "<start_of_turn>model\n",
    "<|assistant|>\n",
    "<|assistant|>",
    "<｜Assistant｜>",
    "[/INST]",
    "\nAssistant:",
)

# JavaScript's trimStart/trimEnd whitespace (WhiteSpace and LineTerminator), not Python's
# str.isspace, which differ on a few control and format characters: the same text either way.
_JS_WHITESPACE = "\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"


def special_tokens(tokenizer: Any) -> List[str]:
    """The special tokens of a Hugging Face tokenizer (or anything with ``all_special_tokens``,
    ``eos_token``, ``pad_token``): what its decoder may leave in a response."""
    if tokenizer is None:
        return []
    found: List[str] = []
    for name in ("eos_token", "pad_token"):
        value = getattr(tokenizer, name, None)
        if isinstance(value, str) and value:
            found.append(value)
    for value in getattr(tokenizer, "all_special_tokens", None) or []:
        if isinstance(value, str) and value and value not in found:
            found.append(value)
    return found


def end_tokens(extra: Optional[Iterable[str]] = None) -> Tuple[str, ...]:
    """``END_OF_TURN_TOKENS`` and the given extra tokens (a tokenizer's special tokens)."""
    tokens = list(END_OF_TURN_TOKENS)
    for token in extra or ():
        if isinstance(token, str) and token and token not in tokens:
            tokens.append(token)
    return tuple(tokens)


def strip_end_of_turn(text: str, tokens: Sequence[str] = END_OF_TURN_TOKENS) -> str:
    """``text`` without the end-of-turn and padding tokens (and whitespace) at its end."""
    result = str(text).rstrip(_JS_WHITESPACE)
    changed = True
    while changed:
        changed = False
        for token in tokens:
            if token and result.endswith(token):
                result = result[: -len(token)].rstrip(_JS_WHITESPACE)
                changed = True
    return result


def split_query(query: str, prompt: Optional[str] = None, tokens: Sequence[str] = END_OF_TURN_TOKENS) -> Tuple[str, str]:
    """(templated prompt, response) of a templated query, as the server's ``/get_reward`` reads it."""
    if prompt and query.startswith(prompt):
        return prompt, strip_end_of_turn(query[len(prompt) :], tokens).lstrip(_JS_WHITESPACE)
    best, best_marker = -1, ""
    for marker in ASSISTANT_MARKERS:
        index = query.rfind(marker)
        # The latest marker wins; at the same position the longer (more specific) one.
        if index > best or (index == best and index >= 0 and len(marker) > len(best_marker)):
            best, best_marker = index, marker
    if best >= 0:
        end = best + len(best_marker)
        return query[:end], strip_end_of_turn(query[end:], tokens).lstrip(_JS_WHITESPACE)
    return prompt or "", strip_end_of_turn(query, tokens)


_TEMPLATE_PATTERNS = (
    (re.compile(r"<\|im_start\|>(\w+)\n([\s\S]*?)(?:<\|im_end\|>|\Z)", re.ASCII), lambda role: role),
    (re.compile(r"<\|start_header_id\|>(\w+)<\|end_header_id\|>\n*([\s\S]*?)(?:<\|eot_id\|>|\Z)", re.ASCII), lambda role: role),
    (re.compile(r"<start_of_turn>(\w+)\n([\s\S]*?)(?:<end_of_turn>|\Z)", re.ASCII), lambda role: "assistant" if role == "model" else role),
)


def prompt_messages(prompt_text: str) -> List[Dict[str, str]]:
    """Messages of a templated prompt; plain text is one user message."""
    for pattern, role in _TEMPLATE_PATTERNS:
        messages = []
        for match in pattern.finditer(prompt_text):
            content = match.group(2).strip(_JS_WHITESPACE)
            # The trailing empty assistant turn is the generation prompt, not a message.
            if content:
                messages.append({"role": role(match.group(1)), "content": content})
        if messages:
            return messages
    return [{"role": "user", "content": prompt_text.strip(_JS_WHITESPACE)}]
