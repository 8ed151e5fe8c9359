"""The physical layer, in Cython: buffers and their owners, ArrayData, bitmaps, offsets, content
checks, the C data interface and the pandas kernels.

It imports nothing above it: only its own modules, `arrowipc.errors` and the type vocabulary
(`arrowipc.types`, `arrowipc.extension`, which import nothing of the model). The IPC codec lives in
`arrowipc.ipc` (`_flatbuf`, `_framing`, `_batch_decode`, `_batch_encode`, `_codecs`) and the
Dissociated wire in `arrowipc.dissociated`; tests/docs/test_layering.py holds the rule.
"""
