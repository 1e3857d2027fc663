// The shared building blocks of the dashboard's pages.
export { Card, type CardProps } from './Card.tsx';
export { CopyBox, CopyButton } from './CopyButton.tsx';
export { ConfirmDialog, Dialog, type ConfirmProps, type DialogProps } from './Dialog.tsx';
export { ErrorMessage, Notice, errorText } from './ErrorMessage.tsx';
export { CheckboxField, SelectField, TextAreaField, TextField, fieldErrors } from './Field.tsx';
export { formatCompact, formatCurrency, formatDate, formatDateTime, formatDuration, formatNumber, formatPercent } from './format.ts';
export { Sparkline } from './Sparkline.tsx';
export { Loading, Spinner } from './Spinner.tsx';
export { Tabs, type TabItem } from './Tabs.tsx';
export { useAsync, type AsyncState } from './useAsync.ts';
export { TableWrap } from './TableWrap.tsx';
