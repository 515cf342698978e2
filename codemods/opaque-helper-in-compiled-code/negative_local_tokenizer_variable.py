# A local variable named `tokenizer` in a data-preparation function that is not compiled (and not
# an attribute of a module).
# tcfix: no TCF102 finding.
import torch
from torch import nn
from transformers import AutoTokenizer


def encode_batch(texts, name: str = "gpt2"):
    tokenizer = AutoTokenizer.from_pretrained(name)
    tokenizer.pad_token = tokenizer.eos_token
    batch = tokenizer(texts, padding=True, return_tensors="pt")
    return batch["input_ids"], batch["attention_mask"], tokenizer.pad_token_id


class BagOfWords(nn.Module):
    def __init__(self, vocab_size: int, classes: int):
        super().__init__()
        self.embed = nn.EmbeddingBag(vocab_size, 64)
        self.fc = nn.Linear(64, classes)

    def forward(self, input_ids):
        return self.fc(self.embed(input_ids))
