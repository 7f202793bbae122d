/**
 * Tile coordinates of the audit log as C2SP tlog-tiles names them: `tile/<L>/<N>[.p/<W>]` for the hashes of level
 * L·8 of the tree, `tile/entries/<N>[.p/<W>]` for the entries themselves. N is written in groups of three digits,
 * every group but the last prefixed with `x` (1234067 → `x001/x234/067`), so that no directory holds more than a
 * thousand names; W is given only for a partial tile (1–255). A tile's bytes never change once it can be served:
 * a mirror caches it for good. Pure code.
 */

/** Tiles are 2^8 hashes (or entries) wide: the spec fixes the height at 8. */
export const TILE_HEIGHT = 8;
export const TILE_WIDTH = 2 ** TILE_HEIGHT;
/** Level 0–63 of tiles: 8·63 tree levels is far beyond any 2^53 entries a number can count. */
const MAX_LEVEL = 63;

/** `level` -1 is the entries tile. */
export interface TileCoordinates {
  level: number;
  index: number;
  width: number;
}

export type TilePathVerdict = { ok: true; tile: TileCoordinates } | { ok: false; reason: string };

const LEVEL = /^(?:0|[1-9]\d?)$/u;
const GROUP = /^x\d{3}$/u;
const LAST = /^\d{3}$/u;
const PARTIAL = /^(?:[1-9]\d?|1\d\d|2[0-4]\d|25[0-5])$/u;

/** Reads a tile path (the part after the log's prefix, starting with `tile/`); says why it is not one. */
export function parseTilePath(path: string): TilePathVerdict {
  const parts = path.split('/');
  if (parts[0] !== 'tile' || parts.length < 3) return refuse('not a tile/<L>/<N> or tile/entries/<N> path');
  const levelPart = parts[1]!;
  let level: number;
  if (levelPart === 'entries') level = -1;
  else if (LEVEL.test(levelPart) && Number(levelPart) <= MAX_LEVEL) level = Number(levelPart);
  else return refuse(`level "${printable(levelPart)}" is not entries or a number from 0 to ${MAX_LEVEL}`);

  let rest = parts.slice(2);
  let width = TILE_WIDTH;
  const last = rest[rest.length - 1]!;
  if (rest.length >= 2 && rest[rest.length - 2]!.endsWith('.p')) {
    if (!PARTIAL.test(last)) return refuse(`width "${printable(last)}" of a partial tile is not 1–255`);
    width = Number(last);
    rest = [...rest.slice(0, -2), rest[rest.length - 2]!.slice(0, -2)];
  }
  const groups = rest.slice(0, -1);
  const final = rest[rest.length - 1]!;
  if (!groups.every((g) => GROUP.test(g)) || !LAST.test(final))
    return refuse('index must be three-digit groups, each but the last prefixed with x');
  if (groups.length > 0 && groups[0] === 'x000') return refuse('index has a leading zero group');
  const index = Number([...groups.map((g) => g.slice(1)), final].join(''));
  if (!Number.isSafeInteger(index)) return refuse('index is too large');
  return { ok: true, tile: { level, index, width } };
}

/** The path of a tile (the inverse of `parseTilePath`). */
export function tilePath(tile: TileCoordinates): string {
  const digits = String(tile.index).padStart(3, '0');
  const head = digits.length % 3 === 0 ? '' : '0'.repeat(3 - (digits.length % 3));
  const groups = (head + digits).match(/\d{3}/gu)!;
  const index = groups.map((g, i) => (i < groups.length - 1 ? `x${g}` : g)).join('/');
  const level = tile.level === -1 ? 'entries' : String(tile.level);
  return `tile/${level}/${index}${tile.width < TILE_WIDTH ? `.p/${tile.width}` : ''}`;
}

/** The tree size that first holds all of a tile: every hash it lists is then a complete subtree's, never to change. */
export function sizeHolding(tile: TileCoordinates): number {
  const end = tile.index * TILE_WIDTH + tile.width;
  return tile.level === -1 ? end : end * 2 ** (TILE_HEIGHT * tile.level);
}

function refuse(reason: string): TilePathVerdict {
  return { ok: false, reason };
}

/** A path segment as it may be quoted back: control characters shown as `?`, and short. */
function printable(part: string): string {
  return part.replace(/[^\x20-\x7e]/gu, '?').slice(0, 24);
}
