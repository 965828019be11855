// Keeps the support library non-empty before its first source exists.
