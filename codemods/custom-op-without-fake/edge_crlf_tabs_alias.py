"""TCF401 edge: CRLF, tabs, `import torch as th`, a method-style body `x.relu()`."""
import torch as th


@th.library.custom_op("mylib::relu", mutates_args=())
def relu(x: th.Tensor) -> th.Tensor:
	return x.relu()
