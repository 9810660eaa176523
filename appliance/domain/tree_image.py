"""The deployment tree as a PNG (DESIGN.md 7.4): a box per activity, arrows for `depend`."""

from __future__ import annotations

import io
from collections.abc import Sequence
from dataclasses import dataclass

from PIL import Image, ImageDraw, ImageFont

BOX_W, BOX_H, GAP_X, GAP_Y, MARGIN = 220, 64, 40, 70, 30
STAGE_COLOURS = {
    "pending": "#9e9e9e",
    "planning": "#42a5f5",
    "planned": "#ffca28",
    "no_change": "#bdbdbd",
    "plan_approved": "#7e57c2",
    "installing": "#29b6f6",
    "completed": "#66bb6a",
    "canceled": "#8d6e63",
    "error": "#ef5350",
}


@dataclass(frozen=True)
class TreeNode:
    """One activity to draw."""

    id: str
    name: str
    version: str
    stage: str
    parent: str | None
    depend: tuple[str, ...] = ()


def _levels(nodes: Sequence[TreeNode]) -> list[list[TreeNode]]:
    ids = {n.id for n in nodes}
    depth: dict[str, int] = {}

    def level(node: TreeNode) -> int:
        if node.id not in depth:
            parent = next((n for n in nodes if n.id == node.parent), None)
            depth[node.id] = 0 if parent is None or node.parent not in ids else level(parent) + 1
        return depth[node.id]

    rows: list[list[TreeNode]] = []
    for node in nodes:
        d = level(node)
        while len(rows) <= d:
            rows.append([])
        rows[d].append(node)
    return rows


def render_tree_png(nodes: Sequence[TreeNode]) -> bytes:
    """PNG bytes: rows by depth, parent lines in grey, dependency arrows in black."""
    rows = _levels(nodes) or [[]]
    width = MARGIN * 2 + max(len(r) for r in rows) * (BOX_W + GAP_X) - GAP_X
    height = MARGIN * 2 + len(rows) * (BOX_H + GAP_Y) - GAP_Y
    image = Image.new("RGB", (max(width, BOX_W + 2 * MARGIN), height), "white")
    draw = ImageDraw.Draw(image)
    font = ImageFont.load_default()
    boxes: dict[str, tuple[int, int, int, int]] = {}
    for r, row in enumerate(rows):
        for c, node in enumerate(row):
            x, y = MARGIN + c * (BOX_W + GAP_X), MARGIN + r * (BOX_H + GAP_Y)
            boxes[node.id] = (x, y, x + BOX_W, y + BOX_H)
    for node in nodes:
        if node.parent in boxes:
            px0, _, px1, py1 = boxes[node.parent]
            x0, y0, x1, _ = boxes[node.id]
            draw.line([((px0 + px1) // 2, py1), ((x0 + x1) // 2, y0)], fill="#b0b0b0", width=2)
        for source in node.depend:
            if source in boxes:
                _arrow(draw, boxes[source], boxes[node.id])
    for node in nodes:
        x0, y0, x1, y1 = boxes[node.id]
        colour = STAGE_COLOURS.get(node.stage, "#9e9e9e")
        draw.rectangle(boxes[node.id], fill="#fafafa", outline=colour, width=3)
        draw.rectangle((x0, y0, x0 + 10, y1), fill=colour)
        draw.text((x0 + 18, y0 + 8), node.name[:30], fill="black", font=font)
        draw.text((x0 + 18, y0 + 26), node.version[:30], fill="#424242", font=font)
        draw.text((x0 + 18, y0 + 44), node.stage, fill=colour, font=font)
    out = io.BytesIO()
    image.save(out, format="PNG")
    return out.getvalue()


def _arrow(draw: ImageDraw.ImageDraw, source: tuple, target: tuple) -> None:
    start = (source[2], (source[1] + source[3]) // 2)
    end = (target[0], (target[1] + target[3]) // 2)
    if target[0] < source[2]:  # target to the left or below: connect bottom to top
        start, end = (
            ((source[0] + source[2]) // 2, source[3]),
            ((target[0] + target[2]) // 2, target[1]),
        )
    draw.line([start, end], fill="black", width=2)
    dx, dy = end[0] - start[0], end[1] - start[1]
    length = max((dx * dx + dy * dy) ** 0.5, 1.0)
    ux, uy = dx / length, dy / length
    left = (end[0] - 10 * ux + 5 * uy, end[1] - 10 * uy - 5 * ux)
    right = (end[0] - 10 * ux - 5 * uy, end[1] - 10 * uy + 5 * ux)
    draw.polygon([end, left, right], fill="black")
