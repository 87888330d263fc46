import type { Amount } from '../api.js';

/** Money with the precision it needs: cents for sums, micro-units for the tiny costs of single requests. */
export function formatCost(amount: Amount): string {
  const value = Number(amount);
  if (value === 0) return '0.00';
  return Math.abs(value) < 0.01 ? value.toFixed(6) : value.toFixed(2);
}

export const formatCount = (n: number): string => n.toLocaleString('en-US');

/** `2026-11-25 14:03:07 UTC`: times are shown in UTC, as the ledger and budgets count them. */
export function formatTime(iso: string | null): string {
  if (iso === null) return '—';
  return `${iso.slice(0, 10)} ${iso.slice(11, 19)} UTC`;
}

export const utcDay = (date: Date): string => date.toISOString().slice(0, 10);

/** The first day of the current UTC month and today: the default range of the usage pages. */
export function thisMonth(): { from: string; to: string } {
  const now = new Date();
  return { from: `${utcDay(now).slice(0, 8)}01`, to: utcDay(now) };
}

export function daysAgo(days: number): string {
  return utcDay(new Date(Date.now() - days * 86_400_000));
}

export const percent = (part: number, whole: number): string => (whole === 0 ? '0%' : `${((100 * part) / whole).toFixed(1)}%`);
