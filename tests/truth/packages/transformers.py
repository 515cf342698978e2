"""transformers 5.23.0: one small model per model family (model_type), built from the family's config class.

Generic rules first: every config field named in SMALL is set to its small value when the family's
default config has it (sub-configs such as text_config/vision_config are shrunk the same way and
passed as dicts), so that derived fields (head_dim, ...) are computed by the config itself; per-layer
kinds, rope sections, stage and convolution lists are cut to match (_layer_kinds, _rope_sections,
_stage_lists). Per-family overrides are in OVERRIDES, each with its reason.

A family's case is its base model (MODEL_MAPPING); decoder-only LMs also get `<family>-generate`: the
CausalLM class, whose `generate` decodes 3 tokens (its inputs carry labels, for its own loss).

Inputs follow the model's `main_input_name`: token ids (batch 2 x 8, then 3 x 12, with an all-ones
attention mask; seq2seq models also get decoder ids; dual encoders such as clip also get pixels),
pixel values (batch 2 then 3, image size as configured), raw audio (batch 2 x 8000 samples, then
3 x 12000), whisper-style mel features. Families with other inputs are left out. A vision-language family may
also get `<family>-images` (IMAGE_PROMPT_CASES): prompts with image tokens and their pixels, so that
its image features are merged into the text (and its placeholder check runs).
"""
from __future__ import annotations

import importlib

import torch

from . import Case

# Field -> small value. Applied only where the default config has the field with a larger int.
SMALL = {
    "num_hidden_layers": 2,
    "num_layers": 2,
    "n_layer": 2,
    "n_layers": 2,
    "encoder_layers": 1,
    "decoder_layers": 1,
    "num_encoder_layers": 1,
    "num_decoder_layers": 1,
    "hidden_size": 64,
    "d_model": 64,
    "n_embd": 64,
    "embed_dim": 64,
    "dim": 64,
    "num_attention_heads": 4,
    "n_head": 4,
    "n_heads": 4,
    "encoder_attention_heads": 4,
    "decoder_attention_heads": 4,
    "num_heads": 4,
    "num_key_value_heads": 2,
    "head_dim": 16,
    "d_kv": 16,
    "kv_channels": 16,
    "intermediate_size": 64,
    "encoder_ffn_dim": 64,
    "decoder_ffn_dim": 64,
    "ffn_dim": 64,
    "d_ff": 64,
    "n_inner": 64,
    "moe_intermediate_size": 32,
    "shared_expert_intermediate_size": 32,
    "num_experts": 4,
    "num_local_experts": 4,
    "n_routed_experts": 4,
    "num_experts_per_tok": 2,
    "vocab_size": 512,
    "image_size": 32,
    "patch_size": 8,
    "projection_dim": 32,
    "projection_size": 64,
    "num_queries": 10,
    # multi-head latent attention (deepseek_v2/v3 and kin): the low-rank and rope parts of a head
    "q_lora_rank": 32,
    "kv_lora_rank": 16,
    "qk_rope_head_dim": 8,
    "qk_nope_head_dim": 8,
    "v_head_dim": 16,
    # partial rotary (gptj, codegen): must fit in head_dim
    "rotary_dim": 8,
}

# Token ids that must stay below the small vocab (an embedding's padding_idx, generate's pad).
TOKEN_IDS = {"pad_token_id": 0, "bos_token_id": 1, "eos_token_id": 2}

# Sub-config fields shrunk recursively (a multimodal model's parts).
SUB_CONFIGS = (
    "text_config",
    "vision_config",
    "audio_config",
    "encoder_config",
    "decoder_config",
    "qformer_config",
    "backbone_config",
)

# Per-family config overrides on top of SMALL; reason in a comment.
OVERRIDES: dict[str, dict] = {
    # the encoder's positions fix the mel input at 2 x max_source_positions frames: 64, not 3000
    "whisper": {"max_source_positions": 32, "max_target_positions": 64},
}

# The catalogue: a stable list, so that results compare across runs. Chosen with check.py
# (transformers 5.23.0): of 791 cases tried (every family's base model and every CausalLM), 471 built
# and ran eagerly, from 313 families once a composite's towers are left to the composite
# (candidates()); the time budget of the full run (about 40 min on 2 cores for all packages) keeps
# 179 of those families (284 cases):
#   - every decoder-only family that builds (105): its base model for inference and training, and
#     its `-generate` case (CausalLM; the driver runs only its generate());
#   - of the other families (encoders, seq2seq, vision, vision-language run on text, dual encoders,
#     speech), the widely used ones (74). The 134 others that pass are left out for time only:
#     `check.py transformers --all` runs every candidate.
# Left out as failing (320 of the 791): 215 whose small config does not hold together (sizes a
# family derives or cross-checks: per-layer lists, out_features, backbone widths, fixed positions),
# 58 with inputs of another kind (audio features, time series, video, agent states), 34 whose
# forward needs more than ids or pixels (boxes, grids, prompts, a session), 12 over 60 s eagerly on
# the loaded 2-core box and 7 over 30 s, 1 needing natten.
FAMILIES = (
    "afmoe", "afmoe-generate", "albert", "altclip", "apertus", "apertus-generate", "arcee", "arcee-generate",
    "aya_vision", "bailing_hybrid", "bailing_hybrid-generate", "bart", "beam", "beam-generate", "beit", "bert",
    "bert-generation", "bert-generation-generate", "big_bird", "biogpt", "biogpt-generate", "bitnet",
    "bitnet-generate", "blenderbot", "blip", "bloom", "bloom-generate", "chinese_clip", "clip", "codegen",
    "codegen-generate", "cohere", "cohere-generate", "cohere2", "cohere2-generate", "cohere2_moe",
    "cohere2_moe-generate", "conditional_detr", "cpmant", "cpmant-generate", "ctrl", "ctrl-generate", "cwm",
    "cwm-generate", "d_fine", "data2vec-audio", "deberta-v2", "deepseek_v4", "deepseek_v4-generate",
    "deformable_detr", "deit", "detr", "diffllama", "diffllama-generate", "dinov2", "dinov3_vit", "distilbert",
    "doge", "doge-generate", "dpt", "efficientnet", "electra", "ernie4_5", "ernie4_5-generate", "ernie4_5_moe",
    "ernie4_5_moe-generate", "exaone4", "exaone4-generate", "exaone_moe", "exaone_moe-generate", "falcon_mamba",
    "falcon_mamba-generate", "flex_olmo", "flex_olmo-generate", "flint", "flint-generate", "florence2", "fuyu",
    "fuyu-generate", "gemma", "gemma-generate", "gemma2", "gemma2-generate", "gemma3", "gemma3-generate", "git",
    "glm", "glm-generate", "glm4", "glm4-generate", "glm4_moe", "glm4_moe-generate", "got_ocr2",
    "got_ocr2-generate", "gpt-sw3", "gpt-sw3-generate", "gpt2", "gpt2-generate", "gpt_bigcode",
    "gpt_bigcode-generate", "gpt_neox", "gpt_neox-generate", "gpt_neox_japanese", "gpt_neox_japanese-generate",
    "gpt_oss", "gpt_oss-generate", "gptj", "gptj-generate", "granite", "granite-generate", "granite_swa",
    "granite_swa-generate", "granitemoe", "granitemoe-generate", "granitemoe_swa", "granitemoe_swa-generate",
    "granitemoeshared", "granitemoeshared-generate", "groupvit", "helium", "helium-generate", "hiera",
    "hrm_text", "hrm_text-generate", "hubert", "hy_v3", "hy_v3-generate", "hy_v4", "hy_v4-generate",
    "hyperclovax", "hyperclovax-generate", "idefics3", "inkling2_text", "inkling2_text-generate",
    "inkling_text", "inkling_text-generate", "internlm3", "internlm3-generate", "internvl", "iquestcoder",
    "iquestcoder-generate", "jais2", "jais2-generate", "janus", "jetmoe", "jetmoe-generate", "kolibri1",
    "kolibri1-generate", "laguna", "laguna-generate", "led", "lfm2", "lfm2-generate", "lfm3", "lfm3-generate",
    "llama", "llama-generate", "llama4", "llava", "llava_next", "longformer", "longt5", "m2m_100", "mamba",
    "mamba-generate", "marian", "mask2former", "mbart", "mellum", "mellum-generate", "mimo_v2_flash",
    "mimo_v2_flash-generate", "minicpm3", "minicpm3-generate", "minimax", "minimax-generate", "minimax_m2",
    "minimax_m2-generate", "minimax_m3_vl_text", "minimax_m3_vl_text-generate", "ministral3",
    "ministral3-generate", "mistral", "mistral-generate", "mistral3", "mixtral", "mixtral-generate", "mllama",
    "mllama-generate", "mobilevit", "modernbert", "modernbert-decoder", "modernbert-decoder-generate", "moshi",
    "moshi-generate", "mpnet", "mpt", "mpt-generate", "mt5", "nanochat", "nanochat-generate", "nemotron_h",
    "nemotron_h-generate", "nllb-moe", "olmo", "olmo-generate", "olmo2", "olmo2-generate", "olmo3",
    "olmo3-generate", "olmo_hybrid", "olmo_hybrid-generate", "olmoe", "olmoe-generate", "openai-gpt",
    "openai-gpt-generate", "opt", "opt-generate", "owlv2", "owlvit", "paligemma", "pegasus", "pegasus_x",
    "persimmon", "persimmon-generate", "phi", "phi-generate", "phi3", "phi3-generate", "phi4_multimodal",
    "phi4_multimodal-generate", "phimoe", "phimoe-generate", "pvt_v2", "qwen2", "qwen2-generate", "qwen2_moe",
    "qwen2_moe-generate", "qwen3", "qwen3-generate", "qwen3_5", "qwen3_5_moe", "qwen3_moe",
    "qwen3_moe-generate", "qwen3_next", "qwen3_next-generate", "qwen3_vl", "resnet", "roberta", "rt_detr",
    "sam_vision_model", "seed_oss", "seed_oss-generate", "segformer", "siglip", "smollm3", "smollm3-generate",
    "smolvlm", "solar_open", "solar_open-generate", "stablelm", "stablelm-generate", "starcoder2",
    "starcoder2-generate", "swinv2", "switch_transformers", "t5", "table-transformer", "umt5", "vaultgemma",
    "vaultgemma-generate", "vit", "vit_mae", "wav2vec2", "wavlm", "whisper", "whisper-generate", "xglm",
    "xglm-generate", "xlm-roberta", "xlnet", "xlnet-generate", "zaya", "zaya-generate",
)

TEXT_BATCHES = ((2, 8), (3, 12))
IMAGE_BATCHES = (2, 3)
# half a second of 16 kHz audio and more: SpecAugment's 10-frame masks need ~25 frames (320 samples each)
AUDIO_BATCHES = ((2, 8000), (3, 12000))


def _mapping():
    from transformers.models.auto.modeling_auto import MODEL_FOR_CAUSAL_LM_MAPPING_NAMES, MODEL_MAPPING_NAMES

    return MODEL_MAPPING_NAMES, MODEL_FOR_CAUSAL_LM_MAPPING_NAMES


def _class(name):
    if isinstance(name, (tuple, list)):
        name = name[0]
    return getattr(importlib.import_module("transformers"), name)


def names() -> list[str]:
    return list(FAMILIES) + list(IMAGE_PROMPT_CASES)


# Vision-language models run with images (`<family>-images`): a prompt whose image tokens stand
# where the image's features go, and the pixels. Run on text alone (their base case), such a model
# never merges features, so its placeholder check (`get_placeholder_mask`) never runs. Batch 2 then
# 3: the number of image features changes with the batch, the size Dynamo made dynamic.
IMAGE_PROMPT_CASES = {"llava-images": "llava"}


def _image_prompt_case(name: str) -> Case:
    """llava's layout: one image per prompt, as many image tokens as the vision tower has patches
    (its CLS token dropped, the config's default strategy), between a few text tokens."""
    family = IMAGE_PROMPT_CASES[name]
    base, _ = _mapping()
    config, overrides = _config(family)
    # The default image token id (32000) lies beyond the small vocabulary: the processor would
    # give one of the tokenizer's ids, so one inside it.
    config.image_token_id = overrides["image_token_id"] = 5
    vision = config.vision_config
    tokens = (vision.image_size // vision.patch_size) ** 2
    torch.manual_seed(0)
    model = _class(base[family])(config).eval()

    def make(batch):
        def inputs():
            ids = torch.randint(6, _vocab(config), (batch, tokens + 4))
            ids[:, 2 : 2 + tokens] = config.image_token_id
            pixels = torch.randn(batch, vision.num_channels, vision.image_size, vision.image_size)
            return (), {"input_ids": ids, "attention_mask": torch.ones_like(ids), "pixel_values": pixels}

        return inputs

    return Case(
        model=model,
        inputs=[make(b) for b in IMAGE_BATCHES],
        loss=_loss,
        options={"config": overrides, "class": base[family], "inputs": "image prompts"},
    )


# Parts of a composite family (its text or vision tower): the composite's case runs their code.
PART_SUFFIXES = ("_text", "_text_model", "_vision", "_vision_model", "_vision_encoder", "_encoder", "_audio",
                 "_audio_encoder", "_audio_model", "_decoder", "_qformer")


def candidates() -> list[str]:
    """Every case the generic rules could build: each family's base model, and a `-generate` case for
    decoder-only ones; the parts of a composite family (its towers) are left to the composite."""
    from transformers.models.auto.modeling_auto import (
        MODEL_FOR_MASKED_LM_MAPPING_NAMES,
        MODEL_FOR_SEQ_TO_SEQ_CAUSAL_LM_MAPPING_NAMES,
    )

    base, causal = _mapping()
    out = []
    for family in base:
        if any(family == parent + suffix for parent in base for suffix in PART_SUFFIXES):
            continue
        out.append(family)
        encoder = family in MODEL_FOR_MASKED_LM_MAPPING_NAMES or family in MODEL_FOR_SEQ_TO_SEQ_CAUSAL_LM_MAPPING_NAMES
        if family in causal and not encoder:
            out.append(f"{family}-generate")
    return out


def _shrunk(config) -> dict:
    """The overrides that make `config` small: SMALL where the default is larger, sub-configs recursively."""
    from transformers import PreTrainedConfig

    out = {}
    for key, small in SMALL.items():
        value = getattr(config, key, None)
        if isinstance(value, int) and not isinstance(value, bool) and value > small:
            out[key] = small
    vocab = out.get("vocab_size", getattr(config, "vocab_size", None))
    for key, small in TOKEN_IDS.items():
        value = getattr(config, key, None)
        if isinstance(value, int) and isinstance(vocab, int) and value >= vocab:
            out[key] = small
    out.update(_layer_kinds(config, out))
    out.update(_rope_sections(config, out))
    out.update(_stage_lists(config))
    for key in SUB_CONFIGS:
        sub = getattr(config, key, None)
        if isinstance(sub, PreTrainedConfig):
            out[key] = _shrunk(sub)
    return out


def _layer_kinds(config, out: dict) -> dict:
    """Hybrid stacks list a kind per layer (full/sliding attention, linear attention, mamba): keep one
    layer of each kind, in their first order, so that every kind of layer and cache still runs."""
    kinds = getattr(config, "layer_types", None)
    layers = out.get("num_hidden_layers")
    derived = isinstance(getattr(type(config), "layer_types", None), property)  # mamba: read-only
    if not isinstance(kinds, (list, tuple)) or not kinds or layers is None or derived:
        return {}
    distinct = list(dict.fromkeys(kinds))
    picked = distinct + [kinds[0]] * max(0, layers - len(distinct))
    return {"layer_types": picked, "num_hidden_layers": len(picked)}


def _rope_sections(config, out: dict) -> dict:
    """Multimodal rope (qwen2_vl and kin) splits half a head into sections: rescale them to the small head."""
    rope = getattr(config, "rope_parameters", None)
    sections = rope.get("mrope_section") if isinstance(rope, dict) else None
    head = out.get("head_dim") or (out.get("hidden_size", 0) // max(out.get("num_attention_heads", 1), 1))
    if not sections or not head:
        return {}
    half, total = head // 2, sum(sections)
    scaled = [max(1, s * half // total) for s in sections]
    scaled[0] += half - sum(scaled)
    return {"rope_parameters": {**rope, "mrope_section": scaled}}


def _stage_lists(config) -> dict:
    """Staged vision models (swin and kin) list depths and heads per stage: one block per stage, and
    heads that divide the small widths."""
    out = {}
    depths, heads = getattr(config, "depths", None), getattr(config, "num_heads", None)
    if isinstance(depths, (list, tuple)) and all(isinstance(d, int) for d in depths):
        out["depths"] = [1] * len(depths)
    if isinstance(heads, (list, tuple)) and all(isinstance(h, int) for h in heads):
        out["num_heads"] = [2 * 2**i for i in range(len(heads))]
    # speech models (wav2vec2 and kin) list a width per feature-extractor convolution
    convs = getattr(config, "conv_dim", None)
    if isinstance(convs, (list, tuple)) and all(isinstance(c, int) for c in convs):
        out["conv_dim"] = [32] * len(convs)
    return out


def _config(family: str):
    """The family's small config, and the overrides that made it (recorded as the case's options)."""
    from transformers import CONFIG_MAPPING

    config_class = CONFIG_MAPPING[family]
    default = config_class()
    overrides = {**_shrunk(default), **OVERRIDES.get(family, {})}
    return config_class(**_on_defaults(default, overrides)), overrides


def _on_defaults(default, overrides: dict) -> dict:
    """A sub-config passed as a dict replaces the default one: start it from the default's fields."""
    from transformers import PreTrainedConfig

    given = dict(overrides)
    for key, value in overrides.items():
        sub = getattr(default, key, None)
        if key in SUB_CONFIGS and isinstance(sub, PreTrainedConfig) and isinstance(value, dict):
            given[key] = {**sub.to_dict(), **_on_defaults(sub, value)}
    return given


def _image_size(config) -> tuple[int, int]:
    for source in (getattr(config, "vision_config", None), config, getattr(config, "backbone_config", None)):
        size = getattr(source, "image_size", None)
        if isinstance(size, int):
            return size, size
        if isinstance(size, (list, tuple)) and len(size) == 2:
            return int(size[0]), int(size[1])
    return 64, 64


def _channels(config) -> int:
    for source in (config, getattr(config, "vision_config", None), getattr(config, "backbone_config", None)):
        channels = getattr(source, "num_channels", None)
        if isinstance(channels, int):
            return channels
    return 3


def _vocab(config) -> int:
    text = getattr(config, "text_config", None) or config
    return min(int(getattr(text, "vocab_size", None) or getattr(config, "vocab_size", None) or 100), 100)


def _dual_encoder(config, model) -> bool:
    """Text and image towers side by side (clip, siglip, align, ...): the forward wants both, and no
    image token marks where an image goes in the text (that is a vision-language model)."""
    import inspect

    if getattr(config, "vision_config", None) is None or getattr(config, "text_config", None) is None:
        return False
    if any(hasattr(config, key) for key in ("image_token_id", "image_token_index", "image_token")):
        return False
    return "pixel_values" in inspect.signature(model.forward).parameters


def _text_inputs(config, model):
    vocab = _vocab(config)
    seq2seq = bool(getattr(config, "is_encoder_decoder", False))
    image = (_channels(config), *_image_size(config)) if _dual_encoder(config, model) else None

    def make(batch, length):
        def inputs():
            ids = torch.randint(3, vocab, (batch, length))
            kwargs = {"input_ids": ids, "attention_mask": torch.ones_like(ids)}
            if seq2seq:
                kwargs["decoder_input_ids"] = torch.randint(3, vocab, (batch, length // 2))
            if image:
                kwargs["pixel_values"] = torch.randn(batch, *image)
            return (), kwargs

        return inputs

    return [make(b, n) for b, n in TEXT_BATCHES]


def _image_inputs(config, model):
    height, width = _image_size(config)
    channels = _channels(config)

    def make(batch):
        return lambda: ((), {"pixel_values": torch.randn(batch, channels, height, width)})

    return [make(b) for b in IMAGE_BATCHES]


def _audio_inputs(config, model):
    def make(batch, samples):
        return lambda: ((), {"input_values": torch.randn(batch, samples)})

    return [make(b, n) for b, n in AUDIO_BATCHES]


def _mel_inputs(config, model):
    """Whisper-style log-mel features: (batch, mel bins, 2 x max_source_positions), plus decoder ids."""
    bins, frames = config.num_mel_bins, 2 * config.max_source_positions
    vocab = _vocab(config)

    def make(batch, length):
        return lambda: ((), {"input_features": torch.randn(batch, bins, frames),
                             "decoder_input_ids": torch.randint(3, vocab, (batch, length))})

    return [make(b, n) for b, n in TEXT_BATCHES]


INPUTS = {"input_ids": _text_inputs, "pixel_values": _image_inputs, "input_values": _audio_inputs,
          "input_features": _mel_inputs}


def _first_tensor(output):
    """The output's main tensor: last_hidden_state, else the first floating tensor found."""
    if getattr(output, "loss", None) is not None:
        return output.loss
    hidden = getattr(output, "last_hidden_state", None)
    if isinstance(hidden, torch.Tensor):
        return hidden
    values = output.values() if hasattr(output, "values") else output
    if isinstance(values, torch.Tensor):
        return values
    for value in values:
        if isinstance(value, torch.Tensor) and value.is_floating_point():
            return value
        if isinstance(value, (tuple, list)) or hasattr(value, "values"):
            found = _first_tensor(value)
            if found is not None:
                return found
    return None


def _loss(output):
    return _first_tensor(output).float().mean()


def _generate_case(family: str) -> Case:
    base, causal = _mapping()
    config, overrides = _config(family)
    torch.manual_seed(0)
    model = _class(causal[family])(config).eval()
    vocab = _vocab(config)

    def make(batch, length):
        def inputs():
            ids = torch.randint(3, vocab, (batch, length))
            return (), {"input_ids": ids, "attention_mask": torch.ones_like(ids), "labels": ids}

        return inputs

    def generate(compiled):
        torch.manual_seed(0)
        ids = torch.randint(3, vocab, (2, 5))
        return compiled.generate(
            input_ids=ids,
            attention_mask=torch.ones_like(ids),
            max_new_tokens=3,
            do_sample=False,
            pad_token_id=0,
        )

    return Case(
        model=model,
        inputs=[make(b, n) for b, n in TEXT_BATCHES],
        loss=lambda output: output.loss,
        generate=generate,
        options={"config": overrides, "class": causal[family]},
    )


def build(name: str) -> Case:
    if name in IMAGE_PROMPT_CASES:
        return _image_prompt_case(name)
    if name.endswith("-generate"):
        return _generate_case(name[: -len("-generate")])
    base, _ = _mapping()
    config, overrides = _config(name)
    torch.manual_seed(0)
    model = _class(base[name])(config).eval()
    kind = model.main_input_name
    if kind not in INPUTS:
        raise ValueError(f"{name}: no input builder for {kind!r}")
    return Case(
        model=model,
        inputs=INPUTS[kind](config, model),
        loss=_loss,
        options={"config": overrides, "class": base[name] if isinstance(base[name], str) else base[name][0]},
    )
