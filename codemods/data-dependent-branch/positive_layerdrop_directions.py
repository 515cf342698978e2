"""LayerDrop written either way round, in a file that imports torch as `th`. A test that drops the
layer when it holds (`self.layerdrop > p`, `self.training and p < self.layerdrop`) gets
`not th.compiler.is_compiling() and` in front; one that keeps the layer when it holds
(`th.rand([]) >= self.layerdrop or not self.training`, the layer call in the body) gets
`th.compiler.is_compiling() or`: under compile both keep every layer. No fix where forcing the test
would do more than keep the layer (an `or` that drops it on another condition too), nor for an
equality or a chained comparison."""
import torch as th
from torch import nn


class RateFirst(nn.Module):
    def __init__(self, dim: int = 8, layerdrop: float = 0.1):
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(dim, dim) for _ in range(3)])
        self.layerdrop = layerdrop

    def forward(self, hidden_states: th.Tensor) -> th.Tensor:
        for layer in self.layers:
            if self.training:
                dropout_probability = th.rand([])
                if self.layerdrop > dropout_probability:
                    continue
            hidden_states = layer(hidden_states)
        for layer in self.layers:
            if self.training and th.rand([]) < self.layerdrop:
                continue
            hidden_states = layer(hidden_states)
        return hidden_states


class KeepWhenAbove(nn.Module):
    def __init__(self, dim: int = 8, layer_drop: float = 0.1):
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(dim, dim) for _ in range(3)])
        self.layer_drop = layer_drop

    def forward(self, hidden_states: th.Tensor) -> th.Tensor:
        for layer in self.layers:
            if th.rand([]) >= self.layer_drop or not self.training:
                hidden_states = layer(hidden_states)
        for layer in self.layers:
            if th.rand([]) > self.layer_drop:
                hidden_states = layer(hidden_states)
        return hidden_states


class NotOnlyLayerDrop(nn.Module):
    def __init__(self, dim: int = 8, layerdrop: float = 0.1):
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(dim, dim) for _ in range(3)])
        self.layerdrop = layerdrop

    def forward(self, hidden_states: th.Tensor, frozen: bool) -> th.Tensor:
        for layer in self.layers:
            dropout_probability = th.rand([])
            if frozen or dropout_probability < self.layerdrop:
                continue
            if 0.0 < dropout_probability < self.layerdrop:
                continue
            if dropout_probability == self.layerdrop:
                continue
            hidden_states = layer(hidden_states)
        return hidden_states
