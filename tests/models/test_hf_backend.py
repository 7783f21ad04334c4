"""The transformers backend on a tiny Qwen2 model and tokenizer built in code (no download)."""

import pytest

from memlens.errors import MemlensError
from memlens.models import GenerationParams, get_model

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

CHATML = ("{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n"
          "{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}")


@pytest.fixture(scope="module")
def tiny_model_dir(tmp_path_factory):
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers

    folder = tmp_path_factory.mktemp("tiny-qwen")
    bpe = Tokenizer(models.BPE(unk_token="<unk>"))
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    trainer = trainers.BpeTrainer(vocab_size=300, special_tokens=["<unk>", "<|im_start|>",
                                                                  "<|im_end|>", "<pad>"])
    bpe.train_from_iterator(["the user asks a question", "the assistant answers with care",
                             "system user assistant hello world"] * 20, trainer)
    tokenizer = transformers.PreTrainedTokenizerFast(
        tokenizer_object=bpe, eos_token="<|im_end|>", pad_token="<pad>", unk_token="<unk>")
    tokenizer.chat_template = CHATML
    tokenizer.save_pretrained(folder)
    config = transformers.Qwen2Config(
        vocab_size=len(tokenizer), hidden_size=64, intermediate_size=128, num_hidden_layers=2,
        num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=256,
        eos_token_id=tokenizer.eos_token_id, pad_token_id=tokenizer.pad_token_id)
    torch.manual_seed(0)
    transformers.Qwen2ForCausalLM(config).save_pretrained(folder)
    return folder


def test_generate_seeded_and_greedy(tiny_model_dir):
    model = get_model(f"hf:{tiny_model_dir}")
    messages = [{"role": "system", "content": "hello"}, {"role": "user", "content": "the question"}]
    expected_prompt = len(model.tokenizer.apply_chat_template(
        messages, add_generation_prompt=True, return_dict=True)["input_ids"])
    state_before = torch.random.get_rng_state()
    sampled = [model.complete(messages, GenerationParams(max_tokens=6, seed=11)) for _ in range(2)]
    assert torch.equal(state_before, torch.random.get_rng_state())  # global RNG untouched
    assert sampled[0].text == sampled[1].text
    greedy = model.complete_batch([messages, messages], GenerationParams(temperature=0, max_tokens=5))
    assert greedy[0].text == greedy[1].text
    for response in sampled + greedy:
        assert response.prompt_tokens == expected_prompt
        assert 1 <= response.completion_tokens <= 6
    assert greedy[0].finish_reason in ("length", "stop")
    assert (greedy[0].completion_tokens == 5) == (greedy[0].finish_reason == "length")
    model.close()


def test_missing_local_model_is_a_clear_error(tmp_path):
    with pytest.raises(MemlensError, match="hf: cannot load"):
        get_model(f"hf:{tmp_path / 'nowhere'}")
