// The shared building blocks of the dashboard's pages.
export { ActionButton, SubmitButton, type ActionButtonProps, type SubmitButtonProps } from './Buttons.tsx';
export { Card, type CardProps } from './Card.tsx';
export { CopyBox, CopyButton } from './CopyButton.tsx';
export { ConfirmDialog, Dialog, FormDialog, type ConfirmProps, type DialogProps, type FormDialogProps } from './Dialog.tsx';
export { DataTable, type Column } from './DataTable.tsx';
export { ErrorMessage, Notice, errorText } from './ErrorMessage.tsx';
export { CheckboxField, SelectField, TextAreaField, TextField, fieldErrors } from './Field.tsx';
export { formatCompact, formatCurrency, formatDate, formatDateTime, formatDuration, formatNumber, formatPercent } from './format.ts';
export { Loaded } from './Loaded.tsx';
export { Sparkline } from './Sparkline.tsx';
export { Loading, Spinner } from './Spinner.tsx';
export { Tabs, type TabItem } from './Tabs.tsx';
export { useAsync, type AsyncState } from './useAsync.ts';
export { TableWrap } from './TableWrap.tsx';
export { useConfirm, type Confirmation } from './useConfirm.tsx';
export { useSubmit, type SubmitState } from './useSubmit.ts';
