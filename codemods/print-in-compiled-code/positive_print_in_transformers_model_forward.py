# A Hugging Face model class: it derives from `PreTrainedModel` (an nn.Module subclass defined in
# transformers), not from nn.Module directly. Its forward is what torch.compile traces.
# tcfix: TCF101 (high) on the print in `TinyBertModel.forward`, fix guards it.
import torch
from torch import nn
from transformers import PretrainedConfig, PreTrainedModel


class TinyBertConfig(PretrainedConfig):
    model_type = "tiny-bert"

    def __init__(self, vocab_size: int = 1000, hidden_size: int = 64, **kwargs):
        super().__init__(**kwargs)
        self.vocab_size = vocab_size
        self.hidden_size = hidden_size


class TinyBertModel(PreTrainedModel):
    config_class = TinyBertConfig

    def __init__(self, config: TinyBertConfig):
        super().__init__(config)
        self.embeddings = nn.Embedding(config.vocab_size, config.hidden_size)
        self.encoder = nn.TransformerEncoderLayer(config.hidden_size, 4, batch_first=True)

    def forward(self, input_ids, attention_mask=None):
        print("TinyBertModel.forward", input_ids.shape)
        return self.encoder(self.embeddings(input_ids))
