# __init__ changes the tokenizer inside an `if` block after storing it, with a multi-line call and
# a trailing comment. The cache line must go after the WHOLE `if` block, at __init__'s body
# indentation (not inside the block, not in the middle of the call).
# tcfix: TCF102 (high); fix inserts the cache after the `if` block.
import torch
from torch import nn


class AudioLM(nn.Module):
    def __init__(self, tokenizer, decoder, extra_tokens=None):
        super().__init__()
        self.tokenizer = tokenizer  # a transformers PreTrainedTokenizerFast
        if extra_tokens:
            self.tokenizer.add_tokens(
                list(extra_tokens),
                special_tokens=True,
            )  # resize happens in the trainer
        self.decoder = decoder

    def forward(self, input_ids):
        audio_mask = input_ids == self.tokenizer.convert_tokens_to_ids("<|audio|>")
        return self.decoder(input_ids, audio_mask=audio_mask)
