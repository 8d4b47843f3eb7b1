// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

/// @notice Test-only stand-in for USDC: 6 decimals, free minting, and a blocklist that behaves as
/// Circle's FiatToken's (Blacklistable, FiatTokenV2_2 in circlefin/stablecoin-evm): `blacklist`,
/// `unBlacklist`, `isBlacklisted`, and `transfer`, `transferFrom`, `approve` and `mint` revert
/// with "Blacklistable: account is blacklisted" when any account they involve is on it (for
/// `transfer`: the sender and `to`; for `transferFrom`: the caller, `from` and `to`). Unlike
/// Circle's, anyone may mint and blacklist. `setBlocked` and `blocked` are the same list under
/// the names the test ERC-20 (TestToken) uses.
contract TestUSDC {
    string public constant name = "USD Coin";
    string public constant symbol = "USDC";
    uint8 public constant decimals = 6;
    uint256 public totalSupply;
    mapping(address => uint256) public balanceOf;
    mapping(address => mapping(address => uint256)) public allowance;
    mapping(address => bool) public blocked;

    event Transfer(address indexed from, address indexed to, uint256 value);
    event Approval(address indexed owner, address indexed spender, uint256 value);
    event Blacklisted(address indexed _account);
    event UnBlacklisted(address indexed _account);

    modifier notBlacklisted(address account) {
        require(!blocked[account], "Blacklistable: account is blacklisted");
        _;
    }

    function mint(address to, uint256 amount) external notBlacklisted(msg.sender) notBlacklisted(to) {
        totalSupply += amount;
        balanceOf[to] += amount;
        emit Transfer(address(0), to, amount);
    }

    function blacklist(address account) external {
        blocked[account] = true;
        emit Blacklisted(account);
    }

    function unBlacklist(address account) external {
        blocked[account] = false;
        emit UnBlacklisted(account);
    }

    function isBlacklisted(address account) external view returns (bool) {
        return blocked[account];
    }

    function setBlocked(address account, bool isBlocked) external {
        blocked[account] = isBlocked;
        if (isBlocked) emit Blacklisted(account);
        else emit UnBlacklisted(account);
    }

    function approve(address spender, uint256 amount)
        external
        notBlacklisted(msg.sender)
        notBlacklisted(spender)
        returns (bool)
    {
        allowance[msg.sender][spender] = amount;
        emit Approval(msg.sender, spender, amount);
        return true;
    }

    function transfer(address to, uint256 amount) external notBlacklisted(msg.sender) notBlacklisted(to) returns (bool) {
        _transfer(msg.sender, to, amount);
        return true;
    }

    function transferFrom(address from, address to, uint256 amount)
        external
        notBlacklisted(msg.sender)
        notBlacklisted(from)
        notBlacklisted(to)
        returns (bool)
    {
        require(amount <= allowance[from][msg.sender], "ERC20: transfer amount exceeds allowance");
        _transfer(from, to, amount);
        allowance[from][msg.sender] -= amount;
        return true;
    }

    /// As FiatTokenV1's `_transfer`, with its revert strings.
    function _transfer(address from, address to, uint256 amount) private {
        require(from != address(0), "ERC20: transfer from the zero address");
        require(to != address(0), "ERC20: transfer to the zero address");
        require(amount <= balanceOf[from], "ERC20: transfer amount exceeds balance");
        balanceOf[from] -= amount;
        balanceOf[to] += amount;
        emit Transfer(from, to, amount);
    }
}
