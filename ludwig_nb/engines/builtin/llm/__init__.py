"""Ludwig's ``model_type: llm`` on the built-in engine: transformers + PEFT (+ bitsandbytes).

The ``[llm]`` extra installs what it needs. The engine's entry points (engine.py) dispatch
here on ``model_type``; the ECD modules beside this package know nothing of it.

Modules: support.py (what of Ludwig's LLM schema is built, refused by name otherwise),
prompts.py (Ludwig's prompt templates), tokens.py (prompt + target token ids, truncation,
padding, per-batch token counts), loading.py (tokenizer, base model, quantization, adapter),
training.py (the run: events, control, evaluation, checkpoints), evaluation.py (Ludwig's LLM
metrics, generated samples), generation.py (the config's generation settings),
model_io.py (the trained model: predict, evaluate, save, load).
"""
