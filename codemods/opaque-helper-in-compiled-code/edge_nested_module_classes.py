# Module classes that are not at the top level: one nested in another class, one built inside a
# factory function. Each caches in its OWN __init__ (the right class, the right indentation).
# tcfix: two TCF102 findings, each fixed inside its own class.
import torch
from torch import nn


class Captioner(nn.Module):
    class PrefixBuilder(nn.Module):
        def __init__(self, tokenizer):
            super().__init__()
            self.tokenizer = tokenizer

        def forward(self, input_ids):
            bos = input_ids.new_full((input_ids.size(0), 1), self.tokenizer.bos_token_id)
            return torch.cat([bos, input_ids], dim=1)

    def __init__(self, tokenizer, decoder):
        super().__init__()
        self.prefix = Captioner.PrefixBuilder(tokenizer)
        self.decoder = decoder

    def forward(self, input_ids):
        return self.decoder(self.prefix(input_ids))


def make_masker(tokenizer):
    class Masker(nn.Module):
        def __init__(self):
            super().__init__()
            self.tokenizer = tokenizer

        def forward(self, input_ids):
            return input_ids.masked_fill(input_ids == self.tokenizer.eos_token_id, 0)

    return Masker()
