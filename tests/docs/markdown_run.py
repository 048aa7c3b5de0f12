"""Run the code blocks of a Markdown page, in order, as a reader would (the docs' doctest).

A fenced block's info string is the language, then optional words: ``file=PATH`` writes the
block to ``PATH`` in the working folder; ``invalid`` marks text IR that must be rejected;
``skip`` leaves a block alone; ``check=status`` compares only a console command's exit
status, not its output.

- ``accy`` blocks must parse and verify (``invalid`` ones must raise ParseError or
  VerifyError);
- ``python`` blocks without ``file=`` run in a fresh interpreter in the working folder;
- ``console`` blocks hold ``$ command`` lines, each followed by its expected output (stdout
  and stderr together; ``...`` matches anything, trailing spaces are ignored). A command
  must exit 0 unless its expected output starts with ``error:``. ``pip install -e .``
  installs the folder into a private target directory (no change to the test
  environment); later commands and python blocks see it through ``PYTHONPATH``.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
_FENCE = re.compile(r"^```(\S*)(.*)$")


@dataclass
class Block:
    lang: str
    words: list[str]
    text: str
    line: int

    @property
    def options(self) -> dict[str, str]:
        return dict(w.split("=", 1) for w in self.words if "=" in w)

    def has(self, flag: str) -> bool:
        return flag in self.words


def blocks(path: Path) -> list[Block]:
    """The fenced code blocks of ``path``, in order (the first line number is 1-based)."""
    out, lines, i = [], path.read_text().splitlines(), 0
    while i < len(lines):
        m = _FENCE.match(lines[i])
        if m and m.group(1):
            start, body = i + 1, []
            i += 1
            while not lines[i].startswith("```"):
                body.append(lines[i])
                i += 1
            out.append(Block(m.group(1), m.group(2).split(), "\n".join(body) + "\n", start))
        elif m:  # an unlabelled block: skip it
            i += 1
            while not lines[i].startswith("```"):
                i += 1
        i += 1
    return out


def ellipsis_match(expected: str, got: str) -> bool:
    """doctest's ELLIPSIS: ``...`` in ``expected`` matches any text (newlines too)."""
    norm = lambda s: "\n".join(line.rstrip() for line in s.strip("\n").splitlines())  # noqa: E731
    parts = norm(expected).split("...")
    got = norm(got)
    if len(parts) == 1:
        return got == parts[0]
    if not got.startswith(parts[0]) or not got.endswith(parts[-1]):
        return False
    pos, end = len(parts[0]), len(got) - len(parts[-1])
    for p in parts[1:-1]:
        k = got.find(p, pos, end)
        if k < 0:
            return False
        pos = k + len(p)
    return pos <= end


@dataclass
class DocRun:
    """Executes one page's blocks in ``workdir``; see the module docstring."""

    page: Path
    workdir: Path
    site: Path | None = None
    log: list[str] = field(default_factory=list)

    def env(self) -> dict[str, str]:
        env = dict(os.environ)
        env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
        if self.site is not None:
            env["PYTHONPATH"] = os.pathsep.join(
                [str(self.site), *filter(None, [env.get("PYTHONPATH")])])
        return env

    def where(self, block: Block) -> str:
        return f"{self.page.name}:{block.line}"

    def run(self) -> None:
        for block in blocks(self.page):
            if block.has("skip"):
                continue
            if "file" in block.options:
                target = self.workdir / block.options["file"]
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_text(block.text)
            if block.lang == "accy":
                self.check_ir(block)
            elif block.lang == "python" and "file" not in block.options:
                self.run_python(block)
            elif block.lang == "console":
                self.run_console(block)

    def check_ir(self, block: Block) -> None:
        import accy
        from accy.errors import ParseError, VerifyError

        if block.has("invalid"):
            try:
                accy.parse_module(block.text)
            except (ParseError, VerifyError):
                return
            raise AssertionError(f"{self.where(block)}: invalid IR block was accepted")
        try:
            accy.parse_module(block.text)
        except (ParseError, VerifyError) as e:
            raise AssertionError(f"{self.where(block)}: IR block rejected: {e}") from e

    def run_python(self, block: Block) -> None:
        proc = subprocess.run([sys.executable, "-c", block.text], cwd=self.workdir,
                              env=self.env(), capture_output=True, text=True, timeout=600,
                              check=False)
        assert proc.returncode == 0, f"{self.where(block)}: python block failed:\n{proc.stderr}"

    def run_console(self, block: Block) -> None:
        commands: list[tuple[str, list[str]]] = []
        for line in block.text.splitlines():
            if line.startswith("$ "):
                commands.append((line[2:].split("  #", 1)[0].strip(), []))
            elif commands:
                commands[-1][1].append(line)
        for command, expected_lines in commands:
            self.run_command(block, command, "\n".join(expected_lines))

    def run_command(self, block: Block, command: str, expected: str) -> None:
        if command == "pip install -e .":
            self.site = self.workdir / "_site"
            command = (f"{sys.executable} -m pip install -q --disable-pip-version-check "
                       f"--no-deps --no-build-isolation --target {self.site} .")
        proc = subprocess.run(["bash", "-c", command], cwd=self.workdir, env=self.env(),
                              capture_output=True, text=True, timeout=600, check=False)
        got = proc.stdout + proc.stderr
        self.log.append(f"$ {command}\n{got}")
        where = f"{self.where(block)}: $ {command}"
        if block.options.get("check") == "status" or not expected.strip():
            assert proc.returncode == 0, f"{where}: exit status {proc.returncode}\n{got}"
            return
        if not expected.lstrip().startswith("error:"):
            assert proc.returncode == 0, f"{where}: exit status {proc.returncode}\n{got}"
        assert ellipsis_match(expected, got), f"{where}: expected\n{expected}\ngot\n{got}"
