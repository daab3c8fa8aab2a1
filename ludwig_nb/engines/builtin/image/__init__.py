"""Ludwig's image input feature on the built-in engine.

What a cell holds and where its file is (:mod:`.cells`), the cheap checks of every image before
any thread starts (:mod:`.checks`), decoding and resizing to uint8 pixels (:mod:`.pixels`, numpy
and Pillow only, so worker processes never import torch), the preprocessing metadata fitted on
the training split (:mod:`.fitting`), the decode pass into memory or a disk cache
(:mod:`.decoding`, :mod:`.disk`), augmentation on the device (:mod:`.augment`), the encoders
(:mod:`.encoders` and the modules it names) and the batch loader thread (:mod:`.loader`).

Importing this package imports nothing else.
"""
