/**
 * Turns any string (any UTF-16, lone surrogates included) into a portable file name part and
 * back. Only `a-z`, `0-9`, `_` and `-` stay as they are; every other code unit is escaped as
 * `%hh` (below U+0100) or `~hhhh`, with lowercase hex. So an encoded name:
 * - is plain lowercase ASCII: no two keys collide on a case-insensitive or Unicode-normalising
 *   file system (macOS), and `A` and `a` remain distinct keys;
 * - never contains `.`: callers append `.<kind>` suffixes that no encoded text can imitate,
 *   and no encoded name can be `.` or `..`;
 * - never contains `/` or NUL.
 */
const KEPT = /^[a-z0-9_-]$/;

export function encodeName(text: string): string {
  let out = '';
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    const unit = text.charCodeAt(i);
    if (KEPT.test(ch)) out += ch;
    else if (unit < 0x100) out += `%${unit.toString(16).padStart(2, '0')}`;
    else out += `~${unit.toString(16).padStart(4, '0')}`;
  }
  return out;
}

/**
 * The text an encoded name stands for, or undefined when the name is not one `encodeName`
 * produces (a stray file someone dropped in the tree): such names are ignored, never guessed.
 */
export function decodeName(name: string): string | undefined {
  let out = '';
  for (let i = 0; i < name.length; ) {
    const ch = name[i];
    if (KEPT.test(ch)) {
      out += ch;
      i += 1;
    } else if (ch === '%' || ch === '~') {
      const width = ch === '%' ? 2 : 4;
      const hex = name.slice(i + 1, i + 1 + width);
      if (!/^[0-9a-f]+$/.test(hex) || hex.length !== width) return undefined;
      out += String.fromCharCode(parseInt(hex, 16));
      i += 1 + width;
    } else {
      return undefined;
    }
  }
  // Only the canonical spelling counts (`%61` is not `a`), so one key has exactly one file.
  return encodeName(out) === name ? out : undefined;
}
