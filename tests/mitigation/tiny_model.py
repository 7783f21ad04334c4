"""A tiny chat model built in code (byte-level BPE tokenizer + 2-layer Qwen2), no download."""

from __future__ import annotations

from pathlib import Path

CHATML = (
    "{% for message in messages %}<|im_start|>{{ message['role'] }}\n{{ message['content'] }}"
    "<|im_end|>\n{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)

SENTENCES = [
    "<think><step_1>Split the rent so each pays a fair share.</step_1>",
    "<step_2>Budget the cost and save money.</step_2></think><answer>Share it.</answer>",
    "Should I move to a new city for a job? Think step by step.",
    "Stay safe and avoid the risk of injury; plan the steps and the timeline.",
    "I am a retired teacher who loves gardening. How do I ask for a raise?",
]


def build_tiny_model(directory: Path, seed: int = 0) -> Path:
    """Save a ~100k-parameter Qwen2 model and its tokenizer under ``directory``."""
    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast, Qwen2Config, Qwen2ForCausalLM

    torch.manual_seed(seed)
    specials = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
    raw = Tokenizer(models.BPE())
    raw.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    raw.decoder = decoders.ByteLevel()
    raw.train_from_iterator(SENTENCES * 4, trainers.BpeTrainer(
        vocab_size=400, special_tokens=specials,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=raw, eos_token="<|im_end|>",
                                        pad_token="<|endoftext|>", bos_token=None)
    tokenizer.chat_template = CHATML
    config = Qwen2Config(vocab_size=len(tokenizer), hidden_size=64, intermediate_size=128,
                         num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
                         max_position_embeddings=2048, tie_word_embeddings=True,
                         eos_token_id=tokenizer.eos_token_id, pad_token_id=tokenizer.pad_token_id)
    model = Qwen2ForCausalLM(config)
    model.generation_config.eos_token_id = tokenizer.eos_token_id
    model.generation_config.pad_token_id = tokenizer.pad_token_id
    directory.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(str(directory))
    tokenizer.save_pretrained(str(directory))
    return directory
