"""The API's authentication moved to `accounts.api_auth`; this old path stays for its importers."""

from accounts.api_auth import api_endpoint as api_endpoint
from accounts.api_auth import authenticate as authenticate
from accounts.api_auth import error as error
