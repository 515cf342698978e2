# The tokenizer is used in `generate` (an eager decoding loop that calls the model) and in
# `decode`; forward never touches it.
# tcfix: no TCF102 finding.
import torch
from torch import nn


class ChatModel(nn.Module):
    def __init__(self, tokenizer, vocab_size: int, dim: int):
        super().__init__()
        self.tokenizer = tokenizer
        self.embed = nn.Embedding(vocab_size, dim)
        self.rnn = nn.GRU(dim, dim, batch_first=True)
        self.head = nn.Linear(dim, vocab_size)

    def forward(self, input_ids):
        out, _ = self.rnn(self.embed(input_ids))
        return self.head(out)

    @torch.inference_mode()
    def generate(self, prompt: str, max_new_tokens: int = 32) -> str:
        ids = torch.tensor([self.tokenizer.encode(prompt)])
        for _ in range(max_new_tokens):
            next_id = self(ids)[:, -1].argmax(-1, keepdim=True)
            if next_id.item() == self.tokenizer.eos_token_id:
                break
            ids = torch.cat([ids, next_id], dim=1)
        return self.decode(ids[0])

    def decode(self, ids) -> str:
        return self.tokenizer.decode(ids.tolist(), skip_special_tokens=True)
