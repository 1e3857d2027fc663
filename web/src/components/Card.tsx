import type { ComponentChildren, JSX } from 'preact';

export interface CardProps {
  /** The card's heading (an `<h2>`, or the level given). */
  title?: ComponentChildren;
  headingLevel?: 2 | 3;
  /** Controls shown at the right of the heading (buttons, a select). */
  actions?: ComponentChildren;
  class?: string;
  id?: string;
  children?: ComponentChildren;
}

/** A white panel with an optional heading row: the dashboard's building block. */
export function Card({ title, headingLevel = 2, actions, class: className, id, children }: CardProps): JSX.Element {
  const Heading = headingLevel === 3 ? 'h3' : 'h2';
  return (
    <section class={className ? `card ${className}` : 'card'} id={id}>
      {(title || actions) && (
        <div class="card-head">
          {title && <Heading class="card-title">{title}</Heading>}
          {actions && <div class="card-actions">{actions}</div>}
        </div>
      )}
      {children}
    </section>
  );
}
