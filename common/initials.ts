/** A person's initials (`A.d.V.` → `A.D.V.`): enough to tell patients apart in a list, without the name itself. */
export function initialsOf(name: { given: string[]; family: string | null }): string {
  const parts = [...name.given, ...(name.family ?? '').split(/\s+/)].filter((part) => part.length > 0);
  return parts.map((part) => `${part[0].toUpperCase()}.`).join('');
}
