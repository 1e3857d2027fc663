import type { JSX } from 'preact';
import { Link } from '../router.tsx';

export interface TabItem {
  href: string;
  label: string;
  current: boolean;
}

/** A row of links styled as tabs; the current one carries aria-current="page". */
export function Tabs({ label, items, replace }: { label: string; items: TabItem[]; replace?: boolean }): JSX.Element {
  return (
    <nav class="tabs" aria-label={label}>
      <ul>
        {items.map((item) => (
          <li key={item.href}>
            <Link href={item.href} replace={replace} class={item.current ? 'tab current' : 'tab'} aria-current={item.current ? 'page' : undefined}>
              {item.label}
            </Link>
          </li>
        ))}
      </ul>
    </nav>
  );
}
