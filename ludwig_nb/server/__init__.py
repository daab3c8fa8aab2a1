"""ludwig_nb.server: the Jupyter server extension behind the JupyterLab sidebar.

Authenticated REST routes over the run registry (``runs_view``) and a server-side GPU
sampler thread (``gpu_feed``); ``extension.load`` wires them into a running server.
Nothing here imports torch, the engines, the runs layer or the UI.
"""
