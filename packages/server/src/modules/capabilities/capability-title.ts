const SEPARATORS = /[\s_\-.:/]+/g;

/**
 * A capability type read as a title, for skill and tool names that people and models see: separators
 * become spaces and the first letter is upper case ("uppercase" -> "Uppercase", "text.summarize/v2"
 * -> "Text summarize v2"). The type itself stays the id that calls use.
 */
export function capabilityTitle(type: string): string {
  const words = type.replace(SEPARATORS, ' ').trim();
  if (words === '') return type;
  return words.charAt(0).toUpperCase() + words.slice(1);
}
