"""The SelfReflect score (docs/protocol.md §5).

``tasks`` builds the masked-word token sequences, ``metric`` holds the distance, ``stopwords``
the masking policy; ``judge`` defines the backend interface with one module per backend
(``hf_judge``, ``vllm_judge``, ``reference_judge``); ``score`` turns answers and summaries into
a ``scores`` table and ``cli`` exposes ``selfreflect score``.
"""
