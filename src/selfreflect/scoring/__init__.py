"""The SelfReflect score (docs/protocol.md §5), read in the order a question is judged.

``experiment`` is the judge pass: what each question of an experiment judges, and
``judge_question``, which takes a question's summary texts one way through ``cache`` (texts
judged before), ``contexts`` (the reference and summary contexts' token sequences, each built
once; ``stopwords`` picks the masked words), ``forwards`` (the judge's forward passes behind one
interface, with one module per backend: ``hf_judge``, ``vllm_judge``, ``reference_judge``) and
``records`` (what each text scored); ``table`` lays the results out as ``judgements`` rows.
``metric`` holds the score's whole definition.
"""
