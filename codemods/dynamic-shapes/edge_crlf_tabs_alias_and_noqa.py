import torch as th


def run(net, loader):
	fast = th.compile(net, dynamic=False)  # fixed image size here
	for images in loader:
		fast(images)


def run_silenced(net, loader):
	fast = th.compile(net, dynamic=False)  # noqa: TCF303
	for images in loader:
		fast(images)
