"""Ludwig's image input feature on the built-in engine.

* :mod:`.cells` what a cell holds and where its file is; :mod:`.checks` the cheap check of every
  image before any thread starts (header and end of each file);
* :mod:`.pixels` decoding and resizing to uint8 with numpy and Pillow (worker processes import
  only this, :mod:`.workers` starts them); :mod:`.decoding` the decode pass into memory or a
  :mod:`.disk` cache read per batch;
* :mod:`.fitting` the metadata fitted on every split's rows (Ludwig 0.11's rules);
  :mod:`.feature` and :mod:`.tables` the entry points the engine's preprocessing calls;
* :mod:`.augment` augmentation on the device; :mod:`.encoders` the input module and the encoders
  (:mod:`.cnn`, :mod:`.resnet_legacy`, :mod:`.mixer`, :mod:`.vit_legacy`,
  :mod:`.torchvision_encoders` with :mod:`.families`);
* :mod:`.capabilities` what of an image input the engine runs.

Importing this package imports nothing else.
"""
