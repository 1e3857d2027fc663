import type { JSX } from 'preact';
import { Card } from '../components/index.ts';
import { Link } from '../router.tsx';
import { useTitle } from '../session.tsx';

export function NotFound({ what = 'page' }: { what?: string }): JSX.Element {
  useTitle('Not found');
  return (
    <>
      <h1>Not found</h1>
      <Card>
        <p>This {what} does not exist, or you do not have access to it.</p>
        <p>
          <Link href="/websites">Go to your websites</Link>
        </p>
      </Card>
    </>
  );
}
