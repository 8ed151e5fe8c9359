"""Shared memory for type-1 bodies, by its former single module's name: the server's side is
arena.py, the client's segments.py, the address layout both share layout.py. The names stay
importable from here."""
from __future__ import annotations

from .arena import (Block, BLOCK_ALIGNMENT, DEFAULT_SEGMENT_SIZE, PAGE_SIZE, PeerLedger,
                    SEGMENT_GRANULE, SharedArena, SharedBudget)
from .layout import (address_of, MAX_SEGMENT_ID, MAX_SEGMENT_SIZE, NAME_PREFIX, OFFSET_MASK,
                     PEER_SEGMENT_ADDRESS, PEER_SEGMENT_BASE, SEGMENT_SHIFT, SHM_DIR,
                     split_address)
from .segments import (DEFAULT_MAX_MAPPED_BYTES, FREE_FLUSH_BYTES, FreeChannel,
                       MAX_NAMED_SEGMENTS, NamedFile, Segment, SegmentTable, SharedBody)

__all__ = ["address_of", "Block", "BLOCK_ALIGNMENT", "DEFAULT_MAX_MAPPED_BYTES",
           "DEFAULT_SEGMENT_SIZE", "FREE_FLUSH_BYTES", "FreeChannel", "MAX_NAMED_SEGMENTS", "MAX_SEGMENT_ID",
           "MAX_SEGMENT_SIZE", "NAME_PREFIX", "NamedFile", "OFFSET_MASK", "PAGE_SIZE",
           "PEER_SEGMENT_ADDRESS", "PEER_SEGMENT_BASE", "PeerLedger", "Segment",
           "SEGMENT_GRANULE", "SEGMENT_SHIFT", "SegmentTable", "SharedArena", "SharedBody",
           "SharedBudget", "SHM_DIR", "split_address"]
