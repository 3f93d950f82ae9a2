// The PIN rule: 4 to 8 digits, not one digit repeated, not a run up or down (1234, 9876).

export type PinProblem = 'PIN_FORMAT' | 'PIN_TOO_WEAK';

export function pinProblem(pin: string): PinProblem | null {
  if (!/^[0-9]{4,8}$/.test(pin)) return 'PIN_FORMAT';
  const digits = [...pin].map(Number);
  if (digits.every((d) => d === digits[0])) return 'PIN_TOO_WEAK';
  const steps = digits.slice(1).map((d, i) => d - digits[i]!);
  if (steps.every((s) => s === 1) || steps.every((s) => s === -1)) return 'PIN_TOO_WEAK';
  return null;
}
