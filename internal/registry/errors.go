package registry

import (
	"fmt"
	"net/http"
)

// apiError is an error as the REST API answers it: an HTTP status and
// Confluent's error code and message.
type apiError struct {
	status int
	code   int
	msg    string
}

func (e *apiError) Error() string { return e.msg }

func errf(status, code int, format string, args ...any) *apiError {
	return &apiError{status: status, code: code, msg: fmt.Sprintf(format, args...)}
}

// Confluent's error codes, as its REST API documents them.
const (
	codeSubjectNotFound       = 40401
	codeVersionNotFound       = 40402
	codeSchemaNotFound        = 40403
	codeSubjectSoftDeleted    = 40404
	codeSubjectNotSoftDeleted = 40405
	codeVersionSoftDeleted    = 40406
	codeVersionNotSoftDeleted = 40407
	codeCompatNotConfigured   = 40408
	codeModeNotConfigured     = 40409
	codeIncompatible          = 409
	codeInvalidSchema         = 42201
	codeInvalidVersion        = 42202
	codeInvalidCompatLevel    = 42203
	codeInvalidMode           = 42204
	codeNotPermitted          = 42205
	codeReferenceExists       = 42206
	codeIDDoesNotMatch        = 42207
	codeInvalidSubject        = 42208
	codeStore                 = 50001
)

func errSubjectNotFound(subject string) *apiError {
	return errf(http.StatusNotFound, codeSubjectNotFound, "Subject '%s' not found.", subject)
}

func errVersionNotFound(v int) *apiError {
	return errf(http.StatusNotFound, codeVersionNotFound, "Version %d not found.", v)
}

func errSchemaNotFound() *apiError {
	return errf(http.StatusNotFound, codeSchemaNotFound, "Schema not found")
}

func errSchemaIDNotFound(id int) *apiError {
	return errf(http.StatusNotFound, codeSchemaNotFound, "Schema %d not found", id)
}

func errInvalidSchema(format string, args ...any) *apiError {
	return errf(http.StatusUnprocessableEntity, codeInvalidSchema, format, args...)
}

func errInvalidVersion(v string) *apiError {
	return errf(http.StatusUnprocessableEntity, codeInvalidVersion,
		"The specified version '%s' is not a valid version id. Allowed values are between [1, 2^31-1] and the string \"latest\"", v)
}

func errReadOnly(subject string) *apiError {
	return errf(http.StatusUnprocessableEntity, codeNotPermitted, "Subject %s in context %s is in read-only mode", subject, contextOf(subject))
}
