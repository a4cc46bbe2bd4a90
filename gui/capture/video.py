"""Writing a clip with PyAV (``av``, FFmpeg in a wheel): MP4 (H.264, yuv420p), WebM (VP9) or a looping GIF.

``ClipWriter(path, (w, h), fps)`` takes RGB frames (``numpy`` uint8 arrays of shape (h, w, 3)) one at a time and
writes them to a hidden temporary file beside ``path`` (``.NAME.part-XXXX.EXT``); ``close()`` renames it to
``path`` only once every frame is in, and ``abort()`` (Ctrl+C, an error) deletes it, so a file under the
requested name is always a whole clip. A GIF gets one palette made for the whole clip (FFmpeg's ``palettegen``
over every frame, then ``paletteuse``): the frames wait in a raw temporary file between the two passes.

PyAV is an optional dependency (``pip install 'one-trip[record]'``): ``missing_library()`` says so in one line.
"""

from __future__ import annotations

import fractions
import os
import shutil
import tempfile
from pathlib import Path

INSTALL_HINT = "pip install 'one-trip[record]'  (or: pip install av)"

# extension -> (FFmpeg encoder, pixel format written, encoder options). MP4: H.264 High profile in yuv420p, what
# PowerPoint, Keynote and every browser play; crf 20 is visually clean for flat diagrams. WebM: VP9 at constant
# quality, libvpx's realtime mode (measured on 30 frames of a Live clip at 1280x720: 1.1 s and 169 kB against 10.6 s
# and 127 kB for "good" at cpu-used 5). GIF: 8-bit palette.
FORMATS = {
    ".mp4": ("libx264", "yuv420p", {"crf": "20", "preset": "medium", "profile": "high"}),
    ".webm": ("libvpx-vp9", "yuv420p", {"crf": "34", "b": "0", "deadline": "realtime", "cpu-used": "8",
                                        "row-mt": "1"}),
    ".gif": ("gif", "pal8", {}),
}


def missing_library() -> str | None:
    """None if PyAV can be imported, else the one line that says how to install it."""
    try:
        import av  # noqa: F401
    except ImportError:
        return f"PyAV (the video encoder) is not installed: {INSTALL_HINT}"
    return None


def out_problem(out: str, size: tuple[int, int]) -> str | None:
    """None if a clip of ``size`` (w, h) pixels can be written to ``out`` (its folder is created), else a one-line
    reason: an unknown extension, odd sides for yuv420p, a folder that cannot be written."""
    path = Path(out)
    if path.is_dir():
        return f"--out {out} is a folder; give a file name such as trip.mp4"
    ext = path.suffix.lower()
    if ext not in FORMATS:
        return f"--out {out}: the extension picks the format; use .mp4 (H.264), .webm (VP9) or .gif"
    if ext != ".gif" and (size[0] % 2 or size[1] % 2):
        return f"--size {size[0]}x{size[1]}: {ext} (yuv420p) needs an even width and height"
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        probe = tempfile.NamedTemporaryFile(dir=path.parent, prefix=".one-trip-", suffix=".probe", delete=False)
        probe.close()
        os.unlink(probe.name)
    except OSError as exc:
        return f"--out {out}: its folder is not writable ({exc.strerror or exc})"
    return None


def space_problem(out: str, size: tuple[int, int], frames: int) -> str | None:
    """None, or the one-line reason a ``.gif`` of ``frames`` frames of ``size`` (w, h) cannot be made beside
    ``out``: its frames wait uncompressed (w × h × 3 bytes each) in a temporary file for the palette pass, and
    that would not fit in the free space of ``out``'s folder (8192x8192 for 60 s at 60 fps: 724 GB). Other
    formats are written as they come (a few MB). The free space is that of the nearest existing folder."""
    if Path(out).suffix.lower() != ".gif":
        return None
    need = size[0] * size[1] * 3 * max(1, int(frames))
    folder = Path(out).absolute().parent
    while not folder.is_dir() and folder != folder.parent:  # --out's folder may not be made yet
        folder = folder.parent
    free = shutil.disk_usage(folder).free
    if need > free:
        return (f"--out {out}: a GIF of {frames:,} frames at {size[0]}x{size[1]} needs {need / 1e9:.1f} GB of "
                f"temporary space beside it, {free / 1e9:.1f} GB is free; use .mp4, or fewer or smaller frames")
    return None


class ClipWriter:
    """Frames in, one clip out. ``write(rgb)`` each frame (uint8, shape (h, w, 3)), then ``close()``.

    Args:
        path: the clip's final name; its extension (.mp4, .webm, .gif) picks the format (KeyError otherwise).
        size: (width, height) in pixels; every frame must be exactly that (ValueError otherwise).
        fps: frames per second (1-120); frame i has presentation time i / fps.
    Raises ImportError when PyAV is missing, OSError when the temporary file cannot be created.
    """

    def __init__(self, path: str | os.PathLike, size: tuple[int, int], fps: int):
        import av

        self.path = Path(path)
        self.size = (int(size[0]), int(size[1]))
        self.fps = int(fps)
        self.frames = 0
        self.ext = self.path.suffix.lower()
        codec, pix_fmt, options = FORMATS[self.ext]
        fd, tmp = tempfile.mkstemp(dir=self.path.parent, prefix=f".{self.path.stem}.part-", suffix=self.ext)
        os.close(fd)
        self.tmp = Path(tmp)
        self._raw = None
        self._container = av.open(str(self.tmp), "w", format={".mp4": "mp4", ".webm": "webm", ".gif": "gif"}[
            self.ext], options={"movflags": "+faststart"} if self.ext == ".mp4" else {})
        self._stream = self._container.add_stream(codec, rate=self.fps, options=options)
        self._stream.width, self._stream.height = self.size
        self._stream.pix_fmt = pix_fmt
        self._stream.time_base = fractions.Fraction(1, self.fps)
        if self.ext == ".gif":  # frames wait here for the palette made over all of them
            self._raw = tempfile.TemporaryFile(dir=self.path.parent, prefix=f".{self.path.stem}.frames-")
            self._palette_graph, self._palette_src, self._palette_sink = self._graph("palettegen", "stats_mode=full")

    def _graph(self, name: str, args: str, palette=None):
        import av
        graph = av.filter.Graph()
        w, h = self.size
        tb = fractions.Fraction(1, self.fps)
        src = graph.add_buffer(width=w, height=h, format="rgb24", time_base=tb)
        node = graph.add(name, args)
        sink = graph.add("buffersink")
        src.link_to(node, 0, 0)
        pal_src = None
        if palette is not None:
            pal_src = graph.add_buffer(width=palette.width, height=palette.height, format=palette.format.name,
                                       time_base=tb)
            pal_src.link_to(node, 0, 1)
        node.link_to(sink)
        graph.configure()
        if pal_src is not None:
            palette.pts = 0
            pal_src.push(palette)
            pal_src.push(None)
        return graph, src, sink

    def _frame(self, rgb, index: int):
        import av
        frame = av.VideoFrame.from_ndarray(rgb, format="rgb24")
        frame.pts = index
        frame.time_base = fractions.Fraction(1, self.fps)
        return frame

    def write(self, rgb) -> None:
        """Append one frame: a C-contiguous uint8 array of shape (height, width, 3), RGB."""
        if rgb.shape != (self.size[1], self.size[0], 3):
            raise ValueError(f"a frame of shape {rgb.shape}, the clip is {self.size[0]}x{self.size[1]}")
        if self._raw is not None:
            self._raw.write(rgb.tobytes())
            self._palette_src.push(self._frame(rgb, self.frames))
            self._drain(self._palette_sink, None)
        else:
            for packet in self._stream.encode(self._frame(rgb, self.frames)):
                self._container.mux(packet)
        self.frames += 1

    def _drain(self, sink, encode) -> list:
        import av
        out = []
        while True:
            try:
                frame = sink.pull()
            except (av.error.EOFError, av.error.BlockingIOError):
                return out
            if encode is None:
                out.append(frame)
            else:
                encode(frame)

    def close(self) -> Path:
        """Flush the encoder, finish the file and rename it to ``path`` (replacing one there). Returns ``path``."""
        if self._raw is not None:
            self._gif_second_pass()
        for packet in self._stream.encode(None):
            self._container.mux(packet)
        self._container.close()
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(self.tmp, 0o666 & ~umask)  # mkstemp made it private; the clip gets a new file's usual mode
        os.replace(self.tmp, self.path)
        return self.path

    def _gif_second_pass(self) -> None:
        import numpy as np
        self._palette_src.push(None)
        palettes = self._drain(self._palette_sink, None)
        if not palettes:
            raise RuntimeError("the GIF palette could not be made (no frames?)")
        _, src, sink = self._graph("paletteuse", "dither=bayer:bayer_scale=4:diff_mode=rectangle",
                                   palette=palettes[-1])
        w, h = self.size
        done = [0]

        def encode(frame):
            frame.pts = done[0]
            frame.time_base = fractions.Fraction(1, self.fps)
            done[0] += 1
            for packet in self._stream.encode(frame):
                self._container.mux(packet)

        self._raw.seek(0)
        for i in range(self.frames):
            rgb = np.frombuffer(self._raw.read(w * h * 3), dtype=np.uint8).reshape(h, w, 3)
            src.push(self._frame(rgb, i))
            self._drain(sink, encode)
        src.push(None)
        self._drain(sink, encode)
        self._raw.close()
        self._raw = None

    def abort(self) -> None:
        """Stop and delete the temporary file: nothing is left under ``path`` or beside it."""
        try:
            self._container.close()
        except Exception:  # noqa: BLE001 - a half-written container may refuse to close; it is deleted anyway
            pass
        if self._raw is not None:
            self._raw.close()
        self.tmp.unlink(missing_ok=True)


def qimage_rgb(image):
    """A ``QImage`` as a C-contiguous uint8 array (height, width, 3), RGB (a copy: the image may go)."""
    import numpy as np
    from PySide6.QtGui import QImage
    rgb = image.convertToFormat(QImage.Format.Format_RGB888)
    w, h, stride = rgb.width(), rgb.height(), rgb.bytesPerLine()
    buf = np.frombuffer(rgb.constBits(), dtype=np.uint8, count=stride * h).reshape(h, stride)
    return buf[:, : w * 3].reshape(h, w, 3).copy()  # a copy always: the converted image is freed on return
