"""config.json, field by field: which keys of a Hugging Face GPT-2 config the engine honours, ignores, or refuses.

Every field of transformers' GPT2Config (plus the PretrainedConfig / GenerationConfig keys a GPT-2 directory
carries) is either honoured (a ``GPT2Config`` field, model/gpt2.py), irrelevant to what the engine computes
(``IRRELEVANT_FIELDS``, with the reason), or refused unless it has its neutral value (``REFUSED_UNLESS``: the
directory is refused with a message naming it). Checked against transformers.GPT2LMHeadModel in
tests/model/test_config_fields.py.
"""

ACTIVATIONS = ("gelu_new", "gelu_pytorch_tanh", "gelu_fast", "gelu", "quick_gelu", "relu", "silu", "swish", "tanh")
IRRELEVANT_FIELDS = {
    **dict.fromkeys(("resid_pdrop", "embd_pdrop", "attn_pdrop", "summary_first_dropout"),
                    "dropout: training only, the engine never drops"),
    "initializer_range": "initialisation: training only",
    **dict.fromkeys(("summary_type", "summary_use_proj", "summary_activation", "summary_proj_to_labels"),
                    "GPT2DoubleHeadsModel's classification head, not the language model"),
    **dict.fromkeys(("use_cache", "output_attentions", "output_hidden_states", "return_dict", "torchscript"),
                    "what a forward call returns, not what it computes"),
    **dict.fromkeys(("model_type", "architectures", "transformers_version", "_name_or_path", "task_specific_params",
                     "id2label", "label2id", "num_labels", "problem_type", "finetuning_task", "tokenizer_class",
                     "prefix", "_commit_hash", "n_ctx"),
     "bookkeeping (model_type is checked; n_ctx read if no n_positions)"),
    **dict.fromkeys(("torch_dtype", "dtype"), "storage dtype: weights are converted to the engine's dtype (fp32)"),
    "pad_token_id": "padding is masked, a pad id is never fed",
    "sep_token_id": "not used by a decoder-only LM",
    "decoder_start_token_id": "encoder-decoder models only (is_encoder_decoder is refused)",
    "reorder_and_upcast_attn": "numerics only: scores are upcast to fp32, which the engine's fp32 already is",
    # decoding strategy: the app's own controls choose it, as arguments given to generate() override these
    **dict.fromkeys(("do_sample", "temperature", "top_k", "top_p", "typical_p", "num_beams", "num_beam_groups",
                     "num_return_sequences", "max_length", "max_new_tokens", "early_stopping", "length_penalty",
                     "diversity_penalty", "penalty_alpha", "chunk_size_feed_forward", "tf_legacy_loss",
                     "use_bfloat16", "remove_invalid_values", "output_scores", "return_dict_in_generate",
                     "cross_attention_hidden_size", "tie_encoder_decoder", "is_decoder"),
                    "decoding choices the app makes itself (max tokens, temperature, top-k, top-p)"),
}
# field -> the only value accepted (None: absent or null). Anything else changes the arithmetic or the stop.
REFUSED_UNLESS = {
    "add_cross_attention": False, "is_encoder_decoder": False, "quantization_config": None, "pruned_heads": {},
    "min_length": 0, "min_new_tokens": None, "suppress_tokens": None, "begin_suppress_tokens": None,
    "bad_words_ids": None, "forced_bos_token_id": None, "forced_eos_token_id": None, "repetition_penalty": 1.0,
    "no_repeat_ngram_size": 0, "encoder_no_repeat_ngram_size": 0, "stop_strings": None, "sequence_bias": None,
    "exponential_decay_length_penalty": None, "forced_decoder_ids": None, "epsilon_cutoff": 0.0,
    "eta_cutoff": 0.0, "min_p": None, "renormalize_logits": False,
}
