"""Draw media/icon.png (128x128 RGBA): a magnifier over lines of text. Python stdlib only.

Run: python3 scripts/make_icon.py   (the PNG is committed; rerun only to change it)
"""

import math
import struct
import zlib
from pathlib import Path

SIZE = 128
BACKGROUND = (30, 58, 95)
TEXT_LINES = (140, 170, 205)
LENS = (255, 255, 255)
ACCENT = (255, 196, 61)


def pixel(x: float, y: float) -> tuple[int, int, int, int]:
    """Colour of one pixel; shapes are tested back to front."""
    corner = 22
    dx = max(corner - x, 0, x - (SIZE - 1 - corner))
    dy = max(corner - y, 0, y - (SIZE - 1 - corner))
    if math.hypot(dx, dy) > corner:
        return (0, 0, 0, 0)
    colour = BACKGROUND
    for row in range(4):
        top = 26 + row * 18
        if top <= y < top + 8 and 18 <= x < (96 if row % 2 else 110):
            colour = TEXT_LINES
    centre_x, centre_y, radius = 58.0, 56.0, 27.0
    distance = math.hypot(x - centre_x, y - centre_y)
    if distance < radius - 5:
        colour = tuple(int(c * 0.55 + 255 * 0.1) for c in colour)
    if radius - 5 <= distance <= radius + 2:
        colour = LENS
    along = ((x - centre_x) + (y - centre_y)) / math.sqrt(2)
    across = abs((x - centre_x) - (y - centre_y)) / math.sqrt(2)
    if radius + 1 < along < radius + 34 and across < 6:
        colour = ACCENT
    return (*colour, 255)


def png(width: int, height: int, rows: list[bytes]) -> bytes:
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    raw = b"".join(b"\x00" + row for row in rows)
    header = struct.pack(">IIBBBBB", width, height, 8, 6, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b"")


def main() -> None:
    rows = [b"".join(bytes(pixel(x + 0.5, y + 0.5)) for x in range(SIZE)) for y in range(SIZE)]
    target = Path(__file__).resolve().parent.parent / "media" / "icon.png"
    target.write_bytes(png(SIZE, SIZE, rows))


if __name__ == "__main__":
    main()
