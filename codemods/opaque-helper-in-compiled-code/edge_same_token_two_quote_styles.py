# The same constant lookup written with two quote styles ("<image>" and '<image>'). It is one
# value: ideally one cached attribute; at worst two, but never a name clash.
# tcfix: two TCF102 findings, both fixed; result parses and a second --apply changes nothing.
import torch
from torch import nn


class Splicer(nn.Module):
    def __init__(self, tokenizer):
        super().__init__()
        self.tokenizer = tokenizer

    def count_images(self, input_ids):
        return (input_ids == self.tokenizer.convert_tokens_to_ids('<image>')).sum(-1)

    def forward(self, input_ids, token_embeds, image_embeds):
        mask = input_ids == self.tokenizer.convert_tokens_to_ids("<image>")
        n_images = self.count_images(input_ids)
        return token_embeds.masked_scatter(mask.unsqueeze(-1), image_embeds), n_images
